package cache

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/notes"
	"github.com/git-synaptic/git-synaptic/rank"
)

// unit returns an 8-d unit vector along axis i (with a little of axis 3).
func unit(i int) []float32 {
	v := make([]float32, 8)
	v[i] = 0.8
	v[3] += 0.6
	return v
}

func TestVectorsSurviveRebuildAndEdits(t *testing.T) {
	ctx := context.Background()
	c, path := newCache(t)
	// the entries waiting for a vector, counted from the queue as searches
	// count them and from every entry as status does
	waiting := func(c *Cache, step string, want int) {
		t.Helper()
		n, err := c.PendingCount(ctx)
		have, total, err2 := c.VectorCounts(ctx)
		if err != nil || err2 != nil || n != want || total-have != want {
			t.Fatalf("%s: %d pending, %d of %d with vectors, want %d waiting (%v %v)", step, n, have, total, want, err, err2)
		}
	}
	a := mk(notes.TypeDecision, "alpha", time.Hour)
	b := mk(notes.TypeIssue, "beta", time.Hour)
	put(t, c, []notes.Entry{a, b})
	if err := c.UseModel(ctx, "m@1", 8); err != nil {
		t.Fatal(err)
	}
	waiting(c, "saved", 2)
	pending, reused, err := c.PendingVectors(ctx, 10)
	if err != nil || len(pending) != 2 || reused != 0 {
		t.Fatalf("pending %v reused %d err %v", pending, reused, err)
	}
	vecs := map[string][]float32{"alpha": unit(0), "beta": unit(1)}
	if err := c.StoreVectors(ctx, pending, [][]float32{vecs[pending[0].Text], vecs[pending[1].Text]}); err != nil {
		t.Fatal(err)
	}
	waiting(c, "embedded", 0)
	hits, err := c.SemanticSearch(ctx, SemanticQuery{Text: "zzz", Vector: unit(1), Mode: ModeVector}, Filter{Limit: 5})
	if err != nil || len(hits) != 2 || hits[0].ID != b.ID || hits[0].VecRank != 1 {
		t.Fatalf("vector search: %+v %v", hits, err)
	}
	// type filters apply to vector results too
	hits, _ = c.SemanticSearch(ctx, SemanticQuery{Vector: unit(1), Mode: ModeVector}, Filter{Types: []notes.Type{notes.TypeDecision}, Limit: 5})
	if len(hits) != 1 || hits[0].ID != a.ID {
		t.Fatalf("filtered: %+v", hits)
	}

	// vectors looked up by id: the ones with a vector, nothing for others
	byID, err := c.VectorsOf(ctx, []string{b.ID, "no-such-id", a.ID})
	if err != nil || len(byID) != 2 || byID[b.ID][1] != unit(1)[1] || byID[a.ID][0] != unit(0)[0] {
		t.Fatalf("vectors by id: %v %v", byID, err)
	}

	// a deleted cache re-indexes from the vector store without the model
	c.Close()
	if err := Remove(path); err != nil {
		t.Fatal(err)
	}
	c2, _, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	put(t, c2, []notes.Entry{a, b})
	if err := c2.UseModel(ctx, "m@1", 8); err != nil {
		t.Fatal(err)
	}
	waiting(c2, "rebuilt", 2)
	if pending, reused, err := c2.PendingVectors(ctx, 10); err != nil || len(pending) != 0 || reused != 2 {
		t.Fatalf("after rebuild: pending %d reused %d err %v", len(pending), reused, err)
	}
	waiting(c2, "restored", 0)
	// an edit needs a new vector; another model starts from scratch
	a.Content = "alpha, edited"
	put(t, c2, []notes.Entry{a})
	if pending, _, _ := c2.PendingVectors(ctx, 10); len(pending) != 1 || pending[0].Text != "alpha, edited" {
		t.Fatalf("after edit: %+v", pending)
	}
	waiting(c2, "edited", 1)
	if err := c2.UseModel(ctx, "other@2", 8); err != nil {
		t.Fatal(err)
	}
	waiting(c2, "other model", 2)
	tx, err := c2.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.DeleteEntry(a.ID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	waiting(c2, "deleted", 1)
}

// A new vector store packs its vectors: 16 KB pages, where SQLite's 4 KB
// gave each 512-dimension vector a page and an overflow page.
func TestVectorStorePacksVectors(t *testing.T) {
	ctx := context.Background()
	c, path := newCache(t)
	var entries []notes.Entry
	for i := range 2000 {
		entries = append(entries, mk(notes.TypeInsight, fmt.Sprintf("entry %d", i), time.Hour))
	}
	put(t, c, entries)
	if err := c.UseModel(ctx, "m@1", 512); err != nil {
		t.Fatal(err)
	}
	pending, _, err := c.PendingVectors(ctx, len(entries))
	if err != nil || len(pending) != len(entries) {
		t.Fatalf("%d pending, %v", len(pending), err)
	}
	vecs := make([][]float32, len(pending))
	for i := range vecs {
		vecs[i] = make([]float32, 512)
		vecs[i][i%512] = 1
	}
	if err := c.StoreVectors(ctx, pending, vecs); err != nil {
		t.Fatal(err)
	}
	var size int
	if err := c.db.QueryRowContext(ctx, `PRAGMA vs.page_size`).Scan(&size); err != nil || size != 16384 {
		t.Fatalf("page size %d, %v", size, err)
	}
	c.db.ExecContext(ctx, `PRAGMA vs.wal_checkpoint(TRUNCATE)`)
	fi, err := os.Stat(VectorsPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if per := fi.Size() / int64(len(entries)); per > 3200 {
		t.Fatalf("%d bytes a vector of 2048", per)
	}
}

// TestSignIndexMatchesSqliteVec: the first stage, reading sqlite-vec's
// shadow tables itself, finds the rows sqlite-vec's own KNN finds at the
// same distances, across chunks, after vectors replaced in older chunks
// and added to newer ones; a Cache that read the chunks before holds what
// one reading them afresh does.
func TestSignIndexMatchesSqliteVec(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	var entries []notes.Entry
	for i := 0; i < 2600; i++ { // three of sqlite-vec's chunks of 1024
		typ := notes.TypeInsight
		if i%5 == 0 { // a filter that admits few
			typ = notes.TypeDecision
		}
		entries = append(entries, mk(typ, fmt.Sprintf("entry %d", i), time.Hour))
	}
	put(t, c, entries)
	const dim = 72 // a tail byte past the 64-bit words
	if err := c.UseModel(ctx, "m@1", dim); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = rng.Float32() - 0.5
		}
		return v
	}
	store := func(items []PendingText) {
		t.Helper()
		vecs := make([][]float32, len(items))
		for i := range vecs {
			vecs[i] = vec()
		}
		if err := c.StoreVectors(ctx, items, vecs); err != nil {
			t.Fatal(err)
		}
	}
	pending, _, err := c.PendingVectors(ctx, 3000)
	if err != nil || len(pending) != len(entries) {
		t.Fatalf("%d pending, %v", len(pending), err)
	}
	check := func(when string) {
		t.Helper()
		for n := 0; n < 5; n++ {
			q := vec()
			var sqlQB []byte
			if err := c.db.QueryRowContext(ctx, `SELECT vec_quantize_binary(?)`, encodeVec(q)).Scan(&sqlQB); err != nil {
				t.Fatal(err)
			}
			if qb := quantize(q); !bytes.Equal(qb, sqlQB) {
				t.Fatalf("quantize %x, sqlite-vec %x", qb, sqlQB)
			}
			ids, err := coarseIDs(ctx, c, q, 50, all)
			if err != nil || len(ids) != 50 {
				t.Fatalf("%s: %d candidates, %v", when, len(ids), err)
			}
			near := c.signs.hamming(sqlQB, 50, nil, false)
			slices.SortFunc(near, func(a, b signDist) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.id, b.id)) })
			rows, err := c.db.QueryContext(ctx, `SELECT rowid, distance FROM vec_bits WHERE e MATCH vec_quantize_binary(?) AND k = 50`, encodeVec(q))
			if err != nil {
				t.Fatal(err)
			}
			dist := map[int64]float64{}
			var dists []float64
			for rows.Next() {
				var id int64
				var d float64
				if err := rows.Scan(&id, &d); err != nil {
					t.Fatal(err)
				}
				dist[id] = d
				dists = append(dists, d)
			}
			rows.Close()
			last := dists[len(dists)-1]
			for i, s := range near {
				d, ok := dist[s.id]
				switch {
				case float64(s.d) != dists[i]:
					t.Fatalf("%s: %d-th at distance %d, sqlite-vec's at %v", when, i, s.d, dists[i])
				case !ok && dists[i] < last: // only a tie at the edge may differ
					t.Fatalf("%s: %d-th (rowid %d) not among sqlite-vec's", when, i, s.id)
				case ok && d != dists[i]:
					t.Fatalf("%s: rowid %d at distance %v, %v here", when, s.id, d, dists[i])
				}
			}
			var filtered [2][]int64
			for i, typ := range []notes.Type{notes.TypeInsight, notes.TypeDecision} {
				if filtered[i], err = coarseIDs(ctx, c, q, 50, Filter{Types: []notes.Type{typ}}); err != nil || len(filtered[i]) != 50 {
					t.Fatalf("%s: %d %ss, %v", when, len(filtered[i]), typ, err)
				}
			}
			kept := c.signs
			c.signs, c.admits = nil, admitted{} // what another process holds
			afresh, err := coarseIDs(ctx, c, q, 50, all)
			if err != nil || fmt.Sprint(afresh) != fmt.Sprint(ids) {
				t.Fatalf("%s: read afresh %v (%v), kept %v", when, afresh, err, ids)
			}
			for i, typ := range []notes.Type{notes.TypeDecision, notes.TypeInsight} { // the other order
				got, err := coarseIDs(ctx, c, q, 50, Filter{Types: []notes.Type{typ}})
				if err != nil || fmt.Sprint(got) != fmt.Sprint(filtered[1-i]) {
					t.Fatalf("%s: %ss read afresh %v (%v), kept %v", when, typ, got, err, filtered[1-i])
				}
			}
			if len(kept.chunks) != len(c.signs.chunks) {
				t.Fatalf("%s: kept %d chunks, afresh %d", when, len(kept.chunks), len(c.signs.chunks))
			}
		}
	}
	store(pending[:1500])
	check("two chunks")
	kept := c.signs // read afresh by check's last query
	store(pending[1500:])
	store(pending[10:400]) // replaced: cleared in the first chunk, written to the newest
	check("three chunks")  // its first query with kept, brought up to date
	if len(kept.chunks) != 3 || kept.gen != c.signs.gen {
		t.Fatalf("the kept index holds %d chunks of generation %s, want 3 of %s", len(kept.chunks), kept.gen, c.signs.gen)
	}
}

func TestSessionContextLiftsTheAnswerAfterAQuestion(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	inSession := func(typ notes.Type, content string, age time.Duration) notes.Entry {
		e := mk(typ, content, age)
		e.SessionID = "s1"
		return e
	}
	question := inSession(notes.TypeInsight, "did the postgres migration finish", 3*time.Hour)
	answer := inSession(notes.TypeProgress, "yes, after the retry fix", 2*time.Hour)
	later := inSession(notes.TypeProgress, "lunch at noon", time.Hour) // after the answer: never a candidate
	entries := []notes.Entry{question, answer, later}
	vecs := map[string][]float32{question.Content: unit(0), answer.Content: unit(1), later.Content: unit(2)}
	// Fillers closer to the query vector (cosine 0.8, the others 0.36)
	// keep the answer out of the vector candidates: only its session
	// neighbour can bring it in.
	filler := []float32{0, 0, 0, 0.6, 0, 0.55, 0.581, 0}
	for i := 0; i < 30; i++ {
		f := mk(notes.TypeInsight, fmt.Sprintf("filler %d", i), time.Duration(i)*time.Minute)
		entries = append(entries, f)
		vecs[f.Content] = filler
	}
	put(t, c, entries)
	if err := c.UseModel(ctx, "m@1", 8); err != nil {
		t.Fatal(err)
	}
	pending, _, _ := c.PendingVectors(ctx, 100)
	vs := make([][]float32, len(pending))
	for i, p := range pending {
		vs[i] = vecs[p.Text]
	}
	if err := c.StoreVectors(ctx, pending, vs); err != nil {
		t.Fatal(err)
	}
	find := func(hits []Hit, id string) *Hit {
		for i := range hits {
			if hits[i].ID == id {
				return &hits[i]
			}
		}
		return nil
	}
	q := SemanticQuery{Text: "postgres migration", Vector: unit(5), Mode: ModeHybrid}
	hits, err := c.SemanticSearch(ctx, q, Filter{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	qh, ah := find(hits, question.ID), find(hits, answer.ID)
	if len(hits) != 5 || hits[0].ID != question.ID || hits[1].ID != answer.ID || ah.LexRank != 0 || ah.VecRank != 0 {
		t.Fatalf("the answer should join through its session neighbour, second: %+v", hits)
	}
	base := qh.Fused - qh.Context
	if want := rank.LendToNext * base; ah.Context < want-1e-9 || ah.Context > want+1e-9 {
		t.Fatalf("answer context %.4f, want %.4f", ah.Context, want)
	}
	// The filter applies to neighbours too; BM25 mode has no context.
	hits, _ = c.SemanticSearch(ctx, q, Filter{Limit: 5, Types: []notes.Type{notes.TypeInsight}})
	if find(hits, answer.ID) != nil {
		t.Fatal("a filtered-out neighbour joined the results")
	}
	q.Mode = ModeBM25
	hits, _ = c.SemanticSearch(ctx, q, Filter{Limit: 5})
	if len(hits) != 1 || hits[0].Context != 0 {
		t.Fatalf("bm25: %+v", hits)
	}
}

// TestVectorRowsNewestWithVectors: VectorRows returns the newest admitted
// entries that have a vector, in order, with their own vectors, however
// many of the newest lack one (it reads them a page at a time).
func TestVectorRowsNewestWithVectors(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	var entries []notes.Entry
	for i := 0; i < 90; i++ {
		typ := notes.TypeInsight
		if i%5 == 4 {
			typ = notes.TypeIssue
		}
		entries = append(entries, mk(typ, fmt.Sprintf("entry %d", i), time.Duration(i)*time.Minute))
	}
	put(t, c, entries)
	if err := c.UseModel(ctx, "m@1", 8); err != nil {
		t.Fatal(err)
	}
	pending, _, _ := c.PendingVectors(ctx, 100)
	vecOf := map[string][]float32{}
	var store []PendingText
	var vecs [][]float32
	for _, p := range pending {
		var i int
		fmt.Sscanf(p.Text, "entry %d", &i)
		// the newest twenty lack a vector, then one in three
		if i < 20 || i%3 == 0 {
			continue
		}
		v := unit(i % 8)
		v[(i+1)%8] = float32(i)
		vecOf[p.Text] = v
		store, vecs = append(store, p), append(vecs, v)
	}
	if err := c.StoreVectors(ctx, store, vecs); err != nil {
		t.Fatal(err)
	}
	// one type, and two (merged from each type's newest)
	for _, types := range [][]notes.Type{{notes.TypeInsight}, {notes.TypeIssue, notes.TypeInsight}} {
		var want []string // the entries of those types with a vector, newest first
		for _, e := range entries {
			if _, ok := vecOf[e.Content]; ok && slices.Contains(types, e.Type) {
				want = append(want, e.Content)
			}
		}
		for _, lim := range []int{1, 7, 25, len(want), 1000} {
			rows, got, err := c.VectorRows(ctx, Filter{Types: types, Limit: lim})
			if err != nil {
				t.Fatal(err)
			}
			n := min(lim, len(want))
			if len(rows) != n || len(got) != n {
				t.Fatalf("%v limit %d: %d rows, %d vectors, want %d", types, lim, len(rows), len(got), n)
			}
			for i, r := range rows {
				if r.Content != want[i] || fmt.Sprint(got[i]) != fmt.Sprint(vecOf[r.Content]) {
					t.Fatalf("%v limit %d, row %d: %q %v, want %q %v", types, lim, i, r.Content, got[i], want[i], vecOf[want[i]])
				}
			}
		}
	}
}

// The in-memory index scans only the rows a filter admits, however far
// they lie from the query; a row admitted since (a new entry) is scanned
// at the next search, one archived since is not.
func TestInMemoryIndexScansWhatTheFilterAdmits(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	rng := rand.New(rand.NewSource(2))
	q := make([]float32, 16)
	for i := range q {
		q[i] = rng.Float32() - 0.5
	}
	near := func(sign float32) []float32 {
		v := make([]float32, 16)
		for i := range v {
			v[i] = sign*q[i] + (rng.Float32()-0.5)/10
		}
		return v
	}
	var entries []notes.Entry
	for i := 0; i < 60; i++ {
		entries = append(entries, mk(notes.TypeInsight, fmt.Sprintf("insight %d", i), time.Hour))
	}
	for i := 0; i < 3; i++ {
		entries = append(entries, mk(notes.TypeDecision, fmt.Sprintf("decision %d", i), time.Hour))
	}
	put(t, c, entries)
	if err := c.UseModel(ctx, "m@1", 16); err != nil {
		t.Fatal(err)
	}
	store := func() {
		t.Helper()
		pending, _, _ := c.PendingVectors(ctx, 100)
		vecs := make([][]float32, len(pending))
		for i, p := range pending {
			vecs[i] = near(1) // insights next to the query
			if strings.HasPrefix(p.Text, "decision") {
				vecs[i] = near(-1) // decisions as far as can be
			}
		}
		if err := c.StoreVectors(ctx, pending, vecs); err != nil {
			t.Fatal(err)
		}
	}
	store()
	decisions := func(want int) {
		t.Helper()
		hits, err := c.Nearest(ctx, q, Filter{Types: []notes.Type{notes.TypeDecision}}, 10)
		if err != nil || len(hits) != want {
			t.Fatalf("%d decisions found, want %d (%v)", len(hits), want, err)
		}
		w, args := Filter{Types: []notes.Type{notes.TypeDecision}}.admitting()
		_, key, err := c.sampleShare(ctx, w, args)
		if err != nil {
			t.Fatal(err)
		}
		admit, err := c.admitted(ctx, key, w, args)
		if err != nil {
			t.Fatal(err)
		}
		ids := c.signs.nearest(q, 5, admit, false)
		if len(ids) != want {
			t.Fatalf("the index scanned %d rows for 5 candidates among %d admitted", len(ids), want)
		}
		for _, id := range ids {
			var typ string
			c.db.QueryRowContext(ctx, `SELECT type FROM entries WHERE rowid=?`, id).Scan(&typ)
			if typ != string(notes.TypeDecision) {
				t.Errorf("candidate %d is a %s", id, typ)
			}
		}
	}
	// a filter that admits most rows needs no set: the nearest of all,
	// the rows it rejects left out afterwards
	c.admits = admitted{}
	hits, err := c.Nearest(ctx, q, Filter{Types: []notes.Type{notes.TypeInsight}}, 10)
	if err != nil || len(hits) != 10 || len(c.admits.sets) != 0 {
		t.Fatalf("insights: %d hits, %v, %d sets built", len(hits), err, len(c.admits.sets))
	}
	for _, h := range hits {
		if h.Type != notes.TypeInsight {
			t.Fatalf("a %s among the insights", h.Type)
		}
	}
	decisions(3)
	put(t, c, []notes.Entry{mk(notes.TypeDecision, "decision 3", time.Minute)})
	store()
	decisions(4)
	// an archived decision is no longer admitted
	put(t, c, nil, notes.Op{V: 1, ID: notes.NewID(), Entry: entries[60].ID, Kind: notes.OpArchive, Clock: 1, At: time.Now().UTC()})
	decisions(3)
}

// Two filters whose values run together alike ("ab" + "c", "a" + "bc")
// each get the rows they admit.
func TestInMemoryIndexTellsFiltersApart(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	one, two := mk(notes.TypeInsight, "one", time.Hour), mk(notes.TypeInsight, "two", time.Hour)
	one.Project, one.Branch = "ab", "c"
	two.Project, two.Branch = "a", "bc"
	put(t, c, []notes.Entry{one, two})
	if err := c.UseModel(ctx, "m@1", 8); err != nil {
		t.Fatal(err)
	}
	pending, _, _ := c.PendingVectors(ctx, 10)
	vecs := [][]float32{{1, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0, 0, 0}}
	if err := c.StoreVectors(ctx, pending, vecs[:len(pending)]); err != nil {
		t.Fatal(err)
	}
	for _, e := range []notes.Entry{one, two} {
		hits, err := c.Nearest(ctx, []float32{1, 1, 0, 0, 0, 0, 0, 0}, Filter{Project: e.Project, Branch: e.Branch}, 5)
		if err != nil || len(hits) != 1 || hits[0].ID != e.ID {
			t.Errorf("project %q branch %q: %d hits %v", e.Project, e.Branch, len(hits), err)
		}
	}
}

// TestSignIndexSeesTheTableMadeAgain: another process switching models
// away and back makes vec_bits again, its chunks numbered from 1 again; a
// Cache that held the old chunks reads the new ones, not its own.
func TestSignIndexSeesTheTableMadeAgain(t *testing.T) {
	ctx := context.Background()
	c, p := newCache(t)
	var entries []notes.Entry
	for i := 0; i < 1100; i++ { // two chunks: the first one's validity alone is read again
		entries = append(entries, mk(notes.TypeInsight, fmt.Sprintf("entry %d", i), time.Hour))
	}
	put(t, c, entries)
	rng := rand.New(rand.NewSource(2))
	storeAll := func(c *Cache, model string) {
		t.Helper()
		if err := c.UseModel(ctx, model, 16); err != nil {
			t.Fatal(err)
		}
		pending, _, _ := c.PendingVectors(ctx, 2000)
		vecs := make([][]float32, len(pending))
		for i := range vecs {
			vecs[i] = make([]float32, 16)
			for j := range vecs[i] {
				vecs[i][j] = rng.Float32() - 0.5
			}
		}
		slices.Reverse(pending) // the first time: other rows in each chunk than when restored in order
		if err := c.StoreVectors(ctx, pending, vecs); err != nil {
			t.Fatal(err)
		}
	}
	storeAll(c, "m@1")
	q := []float32{1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1}
	if _, err := coarseIDs(ctx, c, q, 20, all); err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"m@2", "m@1"} { // the other process, once for each
		other, _, err := Open(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		storeAll(other, model)
		other.Close()
	}
	got, err := coarseIDs(ctx, c, q, 20, all)
	if err != nil {
		t.Fatal(err)
	}
	c.signs = nil
	want, err := coarseIDs(ctx, c, q, 20, all)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("held %v, read afresh %v (%v)", got, want, err)
	}
}

// all is a filter that admits every row.
var all = Filter{IncludeArchived: true}

// coarseIDs is the rows coarse finds, in order.
func coarseIDs(ctx context.Context, c *Cache, q []float32, k int, f Filter) ([]int64, error) {
	vq, err := c.planNearest(ctx, f, k)
	if err != nil {
		return nil, err
	}
	vq.k = k
	vq.rank(q)
	scored, _, err := c.coarse(ctx, vq, q)
	ids := make([]int64, len(scored))
	for i, s := range scored {
		ids[i] = s.rowid
	}
	return ids, err
}

// A large index scanned in parts, one per core (spread), keeps the rows
// one scan in order keeps: the nearest first, ties to the lower
// rowid, rows without a vector and rows the filter rejects left out.
func TestHammingInPartsKeepsWhatOneScanKeeps(t *testing.T) {
	const perChunk, chunks = 1024, 2*parallelRows/1024 + 3
	rng := rand.New(rand.NewSource(5))
	ix := &signIndex{width: 64, nw: 8}
	type row struct {
		id int64
		d  int
	}
	var rows []row
	q := make([]byte, 64)
	rng.Read(q)
	qw := make([]uint64, 8)
	ix.pack(qw, q)
	admit := make([]uint64, (chunks*perChunk)/64+1)
	for ci := range chunks {
		ch := signChunk{id: int64(ci), valid: make([]byte, perChunk/8), rowids: make([]byte, 8*perChunk), words: make([]uint64, 8*perChunk)}
		for i := range perChunk {
			id := int64(ci*perChunk + i + 1)
			binary.LittleEndian.PutUint64(ch.rowids[8*i:], uint64(id))
			d := 0
			for j := range 8 {
				// few distinct distances: many ties at the cut
				ch.words[8*i+j] = qw[j] ^ (uint64(1)<<rng.Intn(3) - 1)
				d += bits.OnesCount64(ch.words[8*i+j] ^ qw[j])
			}
			if rng.Intn(10) > 0 { // a tenth have no vector
				ch.valid[i/8] |= 1 << (i % 8)
			} else {
				continue
			}
			if rng.Intn(4) > 0 { // a quarter the filter rejects
				admit[id/64] |= 1 << (id % 64)
				rows = append(rows, row{id, d})
			}
		}
		ix.chunks = append(ix.chunks, ch)
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.id, b.id)) })
	for _, spread := range []bool{false, true} {
		// k at many points of the distances' distribution: a wrong count of
		// the rows at a distance moves the cut at some of them
		for _, k := range []int{1, 2, 5, 10, 20, 50, 100, 150, 200, 300, 500, 800, 1200, 1600, 2500, 4000, 8000, 16000, len(rows) + 5} {
			got := ix.hamming(q, k, admit, spread)
			ids := make([]int64, len(got))
			for i, g := range got {
				ids[i] = g.id
			}
			slices.Sort(ids)
			var want []int64
			for _, r := range rows[:min(k, len(rows))] {
				want = append(want, r.id)
			}
			slices.Sort(want)
			if !slices.Equal(ids, want) {
				t.Fatalf("spread %v, k=%d: %d rows kept, want %d (first difference among %v… and %v…)", spread, k, len(ids), len(want), ids[:min(5, len(ids))], want[:min(5, len(want))])
			}
		}
	}
}

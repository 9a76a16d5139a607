package cache

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math/rand"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

// A cache that holds vectors in memory (a long-lived process's) ranks
// exactly as one that reads them from the store every time (a command's):
// the same ids, order and scores, with room for only a few vectors (so
// that it lets go of some), after memory changes, and after the model
// changes under it. The first also holds the lexicon, as the warm process
// does (BM25 from memory, the BM25 candidates' vectors read ahead).
func TestHeldVectorsRankAsTheStore(t *testing.T) {
	ctx := context.Background()
	c, p := newCache(t)
	// one with room for every vector, one for ten of them
	var held [2]*Cache
	for i, room := range []int{1000, 10} {
		x, _, err := Open(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		x.HoldVectors(room * 4 * 16) // 16 float32s a vector
		held[i] = x
	}
	held[0].HoldLexicon()
	rng := rand.New(rand.NewSource(7))
	words := []string{"retry", "backoff", "billing", "worker", "postgres", "migration", "redis", "timeout", "deploy", "cache"}
	var entries []memory.Entry
	for i := range 80 {
		typ := []memory.Type{memory.TypeInsight, memory.TypeDecision, memory.TypeIssue, memory.TypeGitCommit}[i%4]
		e := mk(typ, fmt.Sprintf("%s %s %s note %d", words[rng.Intn(10)], words[rng.Intn(10)], words[rng.Intn(10)], i), time.Duration(i)*time.Hour)
		if typ != memory.TypeGitCommit {
			e.SessionID = fmt.Sprintf("s%d", i/6) // session neighbours lend to each other
		}
		entries = append(entries, e)
	}
	put(t, c, entries)
	vector := func() []float32 { return randomVector(rng) }
	store := func(model string) { t.Helper(); embedRandom(t, model, vector, c, held[0], held[1]) }
	now := time.Now()
	same := func(step string) {
		t.Helper()
		for i, text := range []string{"retry backoff", "postgres migration timeout", "billing", "deploy cache worker"} {
			q := SemanticQuery{Text: text, Vector: vector(), Mode: ModeHybrid, Weights: true, Now: now, MinCosine: 0.1}
			f := Filter{Limit: 20}
			if i%2 == 1 {
				f.Types = []memory.Type{memory.TypeDecision, memory.TypeGitCommit}
			}
			want, err := c.SemanticSearch(ctx, q, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range held {
				got, err := h.SemanticSearch(ctx, q, f)
				if err != nil {
					t.Fatal(err)
				}
				if len(want) == 0 || len(got) != len(want) {
					t.Fatalf("%s, %q: %d hits held, %d from the store", step, text, len(got), len(want))
				}
				byID := map[string]Hit{}
				for _, w := range want {
					byID[w.ID] = w
				}
				for _, g := range got {
					if w, ok := byID[g.ID]; ok && (w.Cosine != g.Cosine || w.BM25 != g.BM25 || w.Weight != g.Weight || w.Fused != g.Fused) {
						t.Logf("%s %q %s: cos %v/%v bm25 %v/%v weight %v/%v fused %v/%v vr %d/%d lr %d/%d", step, text, g.ID, g.Cosine, w.Cosine, g.BM25, w.BM25, g.Weight, w.Weight, g.Fused, w.Fused, g.VecRank, w.VecRank, g.LexRank, w.LexRank)
					}
				}
				for j := range want {
					if got[j].ID != want[j].ID || got[j].Score != want[j].Score || got[j].Cosine != want[j].Cosine {
						t.Fatalf("%s, %q, hit %d: held %s %v/%v, store %s %v/%v", step, text, j, got[j].ID, got[j].Score, got[j].Cosine, want[j].ID, want[j].Score, want[j].Cosine)
					}
				}
			}
		}
		if n := len(held[0].held.byKey); n < 40 {
			t.Fatalf("%s: %d vectors held, want most of them", step, n)
		}
		// BM25 alone, cut short, from the held set and rows held whole
		for _, text := range []string{"retry backoff", "billing", "deploy cache worker"} {
			f := Filter{Types: memoryTypes, Limit: 3}
			want, err := c.Search(ctx, text, f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := held[0].Search(ctx, text, f)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, func(a, b Hit) bool { return a.ID == b.ID && a.BM25 == b.BM25 }) {
				t.Fatalf("%s, %q: BM25 held %v, SQL %v", step, text, hitIDs(got), hitIDs(want))
			}
		}
		// the rows held whole are the table's, as of the last search
		whole := held[0].rows.whole
		if len(whole) < 20 {
			t.Fatalf("%s: %d rows held whole", step, len(whole))
		}
		ids := slices.Collect(maps.Keys(whole))
		rows, err := c.rowsByRowid(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if !reflect.DeepEqual(whole[id], rows[id]) {
				t.Fatalf("%s: row %d held %+v, the table has %+v", step, id, whole[id], rows[id])
			}
		}
		if n := len(held[1].held.byKey); n == 0 || n > 10 {
			t.Fatalf("%s: %d vectors held in room for ten", step, n)
		}
	}
	store("m@1")
	if !held[0].WaitLexicon(ctx) {
		t.Fatal("the lexicon was not read")
	}
	same("first")
	put(t, c, []memory.Entry{mk(memory.TypeDecision, "retry billing worker with backoff", time.Minute)},
		memory.Op{V: 1, ID: memory.NewID(), Entry: entries[1].ID, Kind: memory.OpArchive, Clock: 1, At: time.Now().UTC()})
	store("m@1")
	same("after a save and an archive")
	// the state of rows held whole changes: feedback both ways, a type
	// and tags edited, a pin
	var ops []memory.Op
	for i, kind := range []memory.OpKind{memory.OpRelevant, memory.OpIrrelevant, memory.OpEdit, memory.OpPin, memory.OpRelevant} {
		op := memory.Op{V: 1, ID: memory.NewID(), Entry: entries[[]int{5, 6, 9, 10, 13}[i]].ID, Kind: kind, Clock: 2, At: time.Now().UTC()}
		switch kind {
		case memory.OpRelevant:
			op.Score = 1
		case memory.OpEdit:
			op.Type, op.AddTags = memory.TypeIssue, []string{"flaky"}
		}
		if _, err := memory.EncodeOp(op); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
	}
	put(t, c, nil, ops...)
	same("after feedback, an edit and a pin")
	same("again, the changed rows now held whole")
	store("m@2") // every vector again, other values
	same("after a model switch")
}

// The rows a cache that holds vectors keeps for its filters (heldRows)
// follow every change another process makes to the table: new entries,
// an archive, a type and a tag changed by an edit, a delete, a reset of
// the cache, and a log cut short past what it read. After each, the sets
// are those SQL reads, and Nearest finds the same rows with the same
// cosines as a cache that asks SQL.
func TestHeldRowsFollowTheTable(t *testing.T) {
	ctx := context.Background()
	c, h := heldPair(t)
	rng := rand.New(rand.NewSource(11))
	var entries []memory.Entry
	for i := range 300 {
		typ := []memory.Type{memory.TypeInsight, memory.TypeDecision, memory.TypeIssue, memory.TypeGitCommit}[i%4]
		entries = append(entries, mk(typ, fmt.Sprintf("entry %d", i), time.Duration(i)*time.Minute, []string{"a", "b"}[i%2]))
	}
	put(t, c, entries)
	vector := func() []float32 { return randomVector(rng) }
	embed := func() { t.Helper(); embedRandom(t, "m@1", vector, c, h) }
	filters := []Filter{
		{},
		{Types: []memory.Type{memory.TypeDecision, memory.TypeIssue}},
		{Types: []memory.Type{memory.TypeGitCommit}},
		{Tags: []string{"b"}},
	}
	same := func(step string) {
		t.Helper()
		for _, f := range filters {
			q := vector()
			f.Limit = 30
			want, err := c.Nearest(ctx, q, f, 30)
			if err != nil {
				t.Fatal(err)
			}
			got, err := h.Nearest(ctx, q, f, 30)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 || len(got) != len(want) {
				t.Fatalf("%s, %+v: %d held, %d from SQL", step, f, len(got), len(want))
			}
			for i := range want {
				if got[i].ID != want[i].ID || got[i].Cosine != want[i].Cosine {
					t.Fatalf("%s, %+v, hit %d: held %s %v, SQL %s %v", step, f, i, got[i].ID, got[i].Cosine, want[i].ID, want[i].Cosine)
				}
			}
			w, args := f.admitting()
			sql, err := readAdmitted(ctx, c.db, w, args)
			if err != nil {
				t.Fatal(err)
			}
			held := h.rows.sets[admitKey(w, args)]
			if held == nil {
				t.Fatalf("%s, %+v: no set held", step, f)
			}
			for row, key := range h.held.keyOf {
				var hash []byte
				if err := c.db.QueryRow(`SELECT hash FROM vec_state WHERE rowid = ?`, row).Scan(&hash); err != nil || string(hash) != key {
					t.Fatalf("%s: row %d held with vector %x, vec_state has %x (%v)", step, row, key, hash, err)
				}
			}
			for row := int64(0); row < int64(64*max(len(sql), len(held.bits))); row++ {
				if has(sql, row) != has(held.bits, row) {
					t.Fatalf("%s, %+v: row %d admitted %v held, %v by SQL", step, f, row, has(held.bits, row), has(sql, row))
				}
			}
		}
	}
	embed()
	same("first")
	content := "entry edited"
	more := []memory.Entry{mk(memory.TypeDecision, "a new decision", 0, "b"), mk(memory.TypeGitCommit, "a new commit", 0)}
	at := time.Now().UTC()
	put(t, c, more,
		memory.Op{V: 1, ID: memory.NewID(), Entry: entries[1].ID, Kind: memory.OpArchive, Clock: 1, At: at},
		memory.Op{V: 1, ID: memory.NewID(), Entry: entries[2].ID, Kind: memory.OpEdit, Clock: 1, At: at, Type: memory.TypeInsight, AddTags: []string{"b"}},
		memory.Op{V: 1, ID: memory.NewID(), Entry: entries[5].ID, Kind: memory.OpEdit, Clock: 1, At: at, Content: &content})
	embed()
	same("after saves, an archive and edits")
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.DeleteEntry(entries[6].ID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	same("after a delete")
	tx, err = c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Reset(); err != nil {
		t.Fatal(err)
	}
	for _, e := range append(slices.Concat(entries[:6], entries[7:200]), more...) {
		doc, _ := memory.EncodeEntry(e)
		if err := tx.PutEntry(e, "refs/synaptic/memory", false, doc); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	embed()
	same("after a reset")
	put(t, c, nil, memory.Op{V: 1, ID: memory.NewID(), Entry: entries[13].ID, Kind: memory.OpArchive, Clock: 1, At: at})
	if _, err := c.db.Exec(`DELETE FROM lex_log`); err != nil { // as Commit trims it
		t.Fatal(err)
	}
	put(t, c, nil, memory.Op{V: 1, ID: memory.NewID(), Entry: entries[12].ID, Kind: memory.OpArchive, Clock: 1, At: at})
	same("after the log was cut short")
}

// embedRandom makes model (16 dimensions) the active one of caches, and
// stores a vector from vector for every entry the first lacks one for.
func embedRandom(t *testing.T, model string, vector func() []float32, caches ...*Cache) {
	t.Helper()
	ctx := context.Background()
	for _, x := range caches {
		if err := x.UseModel(ctx, model, 16); err != nil {
			t.Fatal(err)
		}
	}
	pending, _, err := caches[0].PendingVectors(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	vecs := make([][]float32, len(pending))
	for i := range vecs {
		vecs[i] = vector()
	}
	if err := caches[0].StoreVectors(ctx, pending, vecs); err != nil {
		t.Fatal(err)
	}
}

// randomVector is a vector of 16 dimensions from rng.
func randomVector(rng *rand.Rand) []float32 {
	v := make([]float32, 16)
	for i := range v {
		v[i] = rng.Float32() - 0.5
	}
	return v
}

func hitIDs(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.ID[:8])
	}
	return out
}

// The rows a cache holds whole stay within heldWholeMax bytes however
// large they are, and it counts what it holds exactly as it lets go.
func TestRowsHeldWholeStayBounded(t *testing.T) {
	c, _ := newCache(t)
	c.HoldVectors(1 << 20)
	big := strings.Repeat("x", memory.MaxContentBytes)
	for id := range int64(1000) {
		row := Row{State: memory.State{Entry: memory.Entry{Content: big[:rand.Intn(len(big))], Tags: []string{"a"}}}}
		c.keepWhole(id%700, row) // some held again
		if c.rows.wholeBytes > heldWholeMax {
			t.Fatalf("after %d rows: %d bytes held, at most %d", id+1, c.rows.wholeBytes, heldWholeMax)
		}
	}
	sum := 0
	for _, r := range c.rows.whole {
		sum += rowBytes(r)
	}
	if sum != c.rows.wholeBytes || len(c.rows.whole) < 50 {
		t.Fatalf("%d rows of %d bytes held, counted %d", len(c.rows.whole), sum, c.rows.wholeBytes)
	}
}

// Session neighbours that join a search are the same rows, admitted by
// the same filter, whether a cache reads them from SQL or from what it
// holds (its filter's set and the rows held whole), the first time and
// once held.
func TestHeldSessionNeighboursAsSQL(t *testing.T) {
	ctx := context.Background()
	c, h := heldPair(t)
	h.HoldLexicon()
	var entries []memory.Entry
	var archive []memory.Op
	for s := range 30 {
		for i, text := range []string{"an unrelated lunch menu", "retry backoff for the billing worker", "the answer: exponential, capped", "more about lunch"} {
			typ := memory.TypeInsight
			if (s+i)%5 == 0 {
				typ = memory.TypeIssue // not admitted by the filter
			}
			if i == 1 && s%6 != 0 {
				text = "nothing to find here" // a few sessions match
			}
			e := mk(typ, fmt.Sprintf("%s %d", text, s), time.Duration(100*s+10-i)*time.Minute)
			e.SessionID = fmt.Sprintf("s%d", s)
			entries = append(entries, e)
			if s%12 == 0 && i == 2 {
				archive = append(archive, memory.Op{V: 1, ID: memory.NewID(), Entry: e.ID, Kind: memory.OpArchive, Clock: 1, At: time.Now().UTC()})
			}
		}
	}
	put(t, c, entries, archive...)
	rng := rand.New(rand.NewSource(5))
	embedRandom(t, "m@1", func() []float32 { return randomVector(rng) }, c, h)
	if !h.WaitLexicon(ctx) {
		t.Fatal("the lexicon was not read")
	}
	q := SemanticQuery{Text: "retry backoff billing", Vector: randomVector(rng), Mode: ModeHybrid, Weights: true, Now: time.Now(), MinCosine: 0.95}
	f := Filter{Types: []memory.Type{memory.TypeInsight, memory.TypeDecision}, Limit: 10}
	want, err := c.SemanticSearch(ctx, q, f)
	if err != nil {
		t.Fatal(err)
	}
	lent := 0
	for _, w := range want {
		if w.LexRank == 0 && w.VecRank == 0 && w.Context > 0 {
			lent++
		}
	}
	if lent == 0 {
		t.Fatalf("no neighbour joined: %v", hitIDs(want))
	}
	for _, step := range []string{"first", "from rows held"} {
		got, err := h.SemanticSearch(ctx, q, f)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, want, func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score }) {
			t.Fatalf("%s: held %v, SQL %v", step, hitIDs(got), hitIDs(want))
		}
	}
}

// heldPair returns a cache and a second one on the same file that holds
// vectors and rows, as a long-lived process's does.
func heldPair(t *testing.T) (c, held *Cache) {
	t.Helper()
	c, p := newCache(t)
	held, _, err := Open(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	held.HoldVectors(1 << 20)
	return c, held
}

// A long-lived cache reads half of many vectors on a second connection
// to the store: the same vectors one connection reads, and all of them
// still when that connection reads another store (one made again after
// it opened) or fails, since it asks again for what it did not find.
func TestVectorsBesideReadWhatOneConnectionReads(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	pending := waitingEntries(t, c, 100, 16)
	rng := rand.New(rand.NewSource(5))
	var vecs [][]float32
	var hashes []string
	for _, p := range pending {
		vecs = append(vecs, randomVector(rng))
		hashes = append(hashes, string(p.hash))
	}
	if err := c.StoreVectors(ctx, pending, vecs); err != nil {
		t.Fatal(err)
	}
	hashes = append(hashes, strings.Repeat("\xab", 16), strings.Repeat("\xcd", 16)) // texts without a vector
	want, err := c.vectorsByHashes(ctx, hashes)
	if err != nil || len(want) != len(pending) {
		t.Fatalf("%d vectors from one connection, %v", len(want), err)
	}
	same := func(step string) {
		t.Helper()
		got, err := c.vectorsBeside(ctx, hashes)
		if err != nil || !maps.EqualFunc(got, want, bytes.Equal) {
			t.Fatalf("%s: %d vectors read beside, %d by one connection (%v)", step, len(got), len(want), err)
		}
	}
	same("the store")
	if c.aside == nil {
		t.Fatal("no second connection was used")
	}
	other := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite3", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE vectors(model TEXT NOT NULL, hash BLOB NOT NULL, vec BLOB NOT NULL, PRIMARY KEY(model, hash)) WITHOUT ROWID`); err != nil {
		t.Fatal(err)
	}
	c.aside.Close()
	c.aside = db
	same("another store beside")
	db.Close()
	same("a closed connection beside")
	c.aside = nil
	same("opened again")
	aside := c.aside
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if aside.PingContext(ctx) == nil {
		t.Fatal("the second connection outlived the cache")
	}
}

// A long-lived cache's BM25 orders its best matches by feedback as SQL
// does when it reads the rows the filter's held set admits whole, rows
// it did not hold before (lexAdmitted): one marked relevant rises from
// past the first page to the top, one marked irrelevant falls off it.
func TestHeldBM25ReadsWholeWithFeedback(t *testing.T) {
	ctx := context.Background()
	c, h := heldPair(t)
	h.HoldLexicon()
	var entries []memory.Entry
	for i := range 12 { // the same words: the newest first
		entries = append(entries, mk(memory.TypeDecision, fmt.Sprintf("flaky deploy step on runner %c", 'a'+i), time.Duration(i)*time.Hour))
	}
	put(t, c, entries)
	if !h.WaitLexicon(ctx) {
		t.Fatal("the lexicon was not read")
	}
	f := Filter{Types: []memory.Type{memory.TypeDecision}, Limit: 3}
	aw, aargs := f.admitting()
	if _, err := h.heldAdmits(ctx, aw, aargs); err != nil { // as a vector lane holds it
		t.Fatal(err)
	}
	same := func(step string) []Hit {
		t.Helper()
		want, err := c.Search(ctx, "flaky deploy", f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := h.Search(ctx, "flaky deploy", f)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != 3 || !slices.EqualFunc(got, want, func(a, b Hit) bool { return a.ID == b.ID && a.BM25 == b.BM25 }) {
			t.Fatalf("%s: held %v, SQL %v", step, hitIDs(got), hitIDs(want))
		}
		return got
	}
	same("first")
	oldest, newest := entries[11], entries[0]
	at := time.Now().UTC()
	put(t, c, nil, memory.Op{V: 1, ID: memory.NewID(), Entry: oldest.ID, Kind: memory.OpRelevant, Score: 1, Clock: 3, At: at},
		memory.Op{V: 1, ID: memory.NewID(), Entry: newest.ID, Kind: memory.OpIrrelevant, Clock: 3, At: at})
	if got := same("after feedback"); got[0].ID != oldest.ID || slices.ContainsFunc(got, func(x Hit) bool { return x.ID == newest.ID }) {
		t.Fatalf("after feedback: %v, want %s first and not %s", hitIDs(got), oldest.ID, newest.ID)
	}
}

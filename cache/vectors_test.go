package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
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
	a := mk(memory.TypeDecision, "alpha", time.Hour)
	b := mk(memory.TypeIssue, "beta", time.Hour)
	put(t, c, []memory.Entry{a, b})
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
	hits, _ = c.SemanticSearch(ctx, SemanticQuery{Vector: unit(1), Mode: ModeVector}, Filter{Types: []memory.Type{memory.TypeDecision}, Limit: 5})
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
	put(t, c2, []memory.Entry{a, b})
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
	put(t, c2, []memory.Entry{a})
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
	pending := waitingEntries(t, c, 2000, 512)
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
	if per := fi.Size() / int64(len(pending)); per > 3200 {
		t.Fatalf("%d bytes a vector of 2048", per)
	}
}

func TestSessionContextLiftsTheAnswerAfterAQuestion(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	inSession := func(typ memory.Type, content string, age time.Duration) memory.Entry {
		e := mk(typ, content, age)
		e.SessionID = "s1"
		return e
	}
	question := inSession(memory.TypeInsight, "did the postgres migration finish", 3*time.Hour)
	answer := inSession(memory.TypeProgress, "yes, after the retry fix", 2*time.Hour)
	later := inSession(memory.TypeProgress, "lunch at noon", time.Hour) // after the answer: never a candidate
	entries := []memory.Entry{question, answer, later}
	vecs := map[string][]float32{question.Content: unit(0), answer.Content: unit(1), later.Content: unit(2)}
	// Fillers closer to the query vector (cosine 0.8, the others 0.36)
	// keep the answer out of the vector candidates: only its session
	// neighbour can bring it in.
	filler := []float32{0, 0, 0, 0.6, 0, 0.55, 0.581, 0}
	for i := 0; i < 30; i++ {
		f := mk(memory.TypeInsight, fmt.Sprintf("filler %d", i), time.Duration(i)*time.Minute)
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
	hits, _ = c.SemanticSearch(ctx, q, Filter{Limit: 5, Types: []memory.Type{memory.TypeInsight}})
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
	var entries []memory.Entry
	for i := 0; i < 90; i++ {
		typ := memory.TypeInsight
		if i%5 == 4 {
			typ = memory.TypeIssue
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
	for _, types := range [][]memory.Type{{memory.TypeInsight}, {memory.TypeIssue, memory.TypeInsight}} {
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

// all is a filter that admits every row.
var all = Filter{IncludeArchived: true}

// Restoring a rebuilt cache's vectors by one pass over the vector store
// gives each waiting entry what a lookup per entry gives it: entries
// sharing a text both get its vector, texts the store lacks stay
// waiting, and another model's vectors of the same texts are left alone.
func TestRestoringByScanTakesWhatLookupsTake(t *testing.T) {
	ctx := context.Background()
	defer func(n, b int) { restorePage, storeBatch = n, b }(restorePage, storeBatch)
	restorePage, storeBatch = 7, 3 // several pages, several batches in each
	var entries []memory.Entry
	for i := range 40 {
		entries = append(entries, mk(memory.TypeInsight, fmt.Sprintf("entry %d", i%30), time.Hour))
	}
	vector := func(text string, model int) []float32 {
		var n int
		fmt.Sscanf(text, "entry %d", &n)
		v := unit(n % 8)
		v[(n/8+model)%8] += 0.1 * float32(n+1)
		return v
	}
	c, path := newCache(t)
	put(t, c, entries)
	for model, name := range []string{"m@1", "other@2"} {
		if err := c.UseModel(ctx, name, 8); err != nil {
			t.Fatal(err)
		}
		pending, _, err := c.PendingVectors(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		var items []PendingText
		var vecs [][]float32
		for _, p := range pending {
			var n int
			fmt.Sscanf(p.Text, "entry %d", &n)
			if model == 1 || n < 25 {
				items, vecs = append(items, p), append(vecs, vector(p.Text, model))
			}
		}
		if err := c.StoreVectors(ctx, items, vecs); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
	}
	var told [][2]int // what the scan told its progress
	record := func(done, total int) { told = append(told, [2]int{done, total}) }
	restore := map[string]func(*Cache) (int, error){
		"scan":    func(c *Cache) (int, error) { return c.restoreScanning(ctx, record) },
		"lookups": func(c *Cache) (int, error) { _, n, err := c.pendingVectors(ctx, 0, true); return n, err },
		"chosen":  func(c *Cache) (int, error) { return c.RestoreVectors(ctx, nil) },
	}
	for _, way := range []string{"scan", "lookups", "chosen"} {
		if err := Remove(path); err != nil {
			t.Fatal(err)
		}
		c, _, err := Open(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		put(t, c, entries)
		if err := c.UseModel(ctx, "m@1", 8); err != nil {
			t.Fatal(err)
		}
		restored, err := restore[way](c)
		waiting, err2 := c.PendingCount(ctx)
		got, err3 := c.VectorsOf(ctx, ids)
		c.Close()
		if err != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: %v %v %v", way, err, err2, err3)
		}
		// entries 0..24 and 30..39 (texts 0..9) have m@1's vectors
		if restored != 35 || waiting != 5 || len(got) != 35 {
			t.Fatalf("%s: restored %d, %d waiting, %d with vectors; want 35, 5, 35", way, restored, waiting, len(got))
		}
		// page by page, then all 40 gone through (5 left to embed)
		if way == "scan" && (len(told) < 3 || told[len(told)-1] != [2]int{40, 40} ||
			!slices.IsSortedFunc(told, func(a, b [2]int) int { return a[0] - b[0] })) {
			t.Fatalf("scan told its progress %v", told)
		}
		for i, e := range entries {
			want := vector(e.Content, 0)
			if v, ok := got[e.ID]; ok != (i%30 < 25) || ok && !slices.Equal(v, want) {
				t.Fatalf("%s: %q has %v (%v), want m@1's %v", way, e.Content, v, ok, want)
			}
		}
	}
}

// Restoring while the index holds sign bits replaces those of an entry
// edited to a text the store has: the deletes of the old bits are
// skipped only when the index began empty (a rebuilt cache).
func TestRestoringReplacesTheSignBitsOfAnEditedEntry(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	var entries []memory.Entry
	for i := range 4 {
		entries = append(entries, mk(memory.TypeInsight, fmt.Sprintf("entry %d", i), time.Hour))
	}
	put(t, c, entries)
	if err := c.UseModel(ctx, "m@1", 8); err != nil {
		t.Fatal(err)
	}
	pending, _, err := c.PendingVectors(ctx, 10)
	if err != nil || len(pending) != 4 {
		t.Fatalf("%d pending, %v", len(pending), err)
	}
	vecs := make([][]float32, len(pending))
	for i, p := range pending {
		var n int
		fmt.Sscanf(p.Text, "entry %d", &n)
		vecs[i] = unit(n * 2)
	}
	if err := c.StoreVectors(ctx, pending, vecs); err != nil {
		t.Fatal(err)
	}
	edited := entries[0]
	edited.Content = "entry 2" // unit(4)'s text, in the store
	put(t, c, []memory.Entry{edited})
	if n, err := c.PendingCount(ctx); err != nil || n != 1 {
		t.Fatalf("%d waiting after the edit (%v), want 1", n, err)
	}
	restored, err := c.restoreScanning(ctx, func(int, int) {})
	if err != nil || restored != 1 {
		t.Fatalf("restored %d (%v), want the edited entry", restored, err)
	}
	var rows int
	var same bool
	err = c.db.QueryRowContext(ctx, `SELECT count(*), coalesce(max(e = vec_quantize_binary(?)), 0) FROM vec_bits WHERE rowid = (SELECT rowid FROM entries WHERE id = ?)`,
		encodeVec(unit(4)), edited.ID).Scan(&rows, &same)
	if err != nil || rows != 1 || !same {
		t.Fatalf("the edited entry has %d rows of sign bits, its new text's: %v (%v)", rows, same, err)
	}
}

// A restore whose context ends midway restores nothing, and leaves the
// store's second connection, which read the pages, free: the next
// restore takes every vector.
func TestARestoreEndedMidwayRestoresNothing(t *testing.T) {
	defer func(n, b int) { restorePage, storeBatch = n, b }(restorePage, storeBatch)
	restorePage, storeBatch = 2, 1
	ctx := context.Background()
	c := rebuiltWithStore(t, 9, nil)
	ending, cancel := context.WithCancel(ctx)
	defer cancel()
	midway := func(done, total int) {
		if done >= 4 { // a few vectors in
			cancel()
		}
	}
	if n, err := c.restoreScanning(ending, midway); !errors.Is(err, context.Canceled) || n != 0 {
		t.Fatalf("a restore ended midway: %d restored, %v; want 0 and context.Canceled", n, err)
	}
	if n, err := c.PendingCount(ctx); err != nil || n != 9 {
		t.Fatalf("%d waiting after the ended restore (%v), want 9", n, err)
	}
	if n, err := c.restoreScanning(ctx, func(int, int) {}); err != nil || n != 9 {
		t.Fatalf("the next restore: %d restored, %v; want 9", n, err)
	}
}

// WaitingStored says whether most entries waiting for a vector have one
// stored under the active model: none waiting, no; after the cache went
// and the store stayed, yes; for a model none was embedded with, no.
func TestWaitingStoredSaysWhenARestorePays(t *testing.T) {
	ctx := context.Background()
	c := rebuiltWithStore(t, 5, func(c *Cache) {
		if ok, err := c.WaitingStored(ctx); ok || err != nil {
			t.Fatalf("none waiting: %v, %v; want false", ok, err)
		}
	})
	for _, m := range []struct {
		name   string
		stored bool
	}{{"m@1", true}, {"other@2", false}} {
		if err := c.UseModel(ctx, m.name, 8); err != nil {
			t.Fatal(err)
		}
		if ok, err := c.WaitingStored(ctx); ok != m.stored || err != nil {
			t.Fatalf("%s: %v, %v; want %v", m.name, ok, err, m.stored)
		}
	}
}

// rebuiltWithStore returns a cache of n insights ("entry i") that every
// one waits in for the vector the store holds for it (unit(i%8) under
// model m@1, the active model): the vectors were stored, then the cache
// deleted and made again, as a reindex leaves it before its restore.
// before, when set, runs on the first cache once the vectors are stored.
func rebuiltWithStore(t *testing.T, n int, before func(*Cache)) *Cache {
	t.Helper()
	ctx := context.Background()
	c, path := newCache(t)
	var entries []memory.Entry
	for i := range n {
		entries = append(entries, mk(memory.TypeInsight, fmt.Sprintf("entry %d", i), time.Hour))
	}
	put(t, c, entries)
	if err := c.UseModel(ctx, "m@1", 8); err != nil {
		t.Fatal(err)
	}
	pending, _, err := c.PendingVectors(ctx, n+1)
	if err != nil || len(pending) != n {
		t.Fatalf("%d pending, %v", len(pending), err)
	}
	vecs := make([][]float32, len(pending))
	for i := range vecs {
		vecs[i] = unit(i % 8)
	}
	if err := c.StoreVectors(ctx, pending, vecs); err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before(c)
	}
	c.Close()
	if err := Remove(path); err != nil { // the vector store stays
		t.Fatal(err)
	}
	if c, _, err = Open(path, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	put(t, c, entries)
	if err := c.UseModel(ctx, "m@1", 8); err != nil {
		t.Fatal(err)
	}
	return c
}

// Storing vectors under a context that ended stores none of them: the
// statements run without it (noCancel), so store checks it between its
// batches, and the transaction is rolled back.
func TestStoringUnderAnEndedContextStoresNothing(t *testing.T) {
	defer func(b int) { storeBatch = b }(storeBatch)
	storeBatch = 2
	ctx := context.Background()
	c, _ := newCache(t)
	pending := waitingEntries(t, c, 5, 8)
	vecs := make([][]float32, len(pending))
	for i := range vecs {
		vecs[i] = unit(i % 8)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.blobWriter(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	blobs := make([][]byte, len(vecs))
	for i, v := range vecs {
		blobs[i] = encodeVec(v)
	}
	err = w.store(ended, pending, blobs)
	w.close()
	tx.Rollback()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("store under an ended context: %v, want context.Canceled", err)
	}
	if n, err := c.PendingCount(ctx); err != nil || n != 5 {
		t.Fatalf("%d waiting after the refused store (%v), want 5", n, err)
	}
	if err := c.StoreVectors(ctx, pending, vecs); err != nil {
		t.Fatal(err)
	}
	if n, err := c.PendingCount(ctx); err != nil || n != 0 {
		t.Fatalf("%d waiting after storing 5 in batches of 2 (%v), want 0", n, err)
	}
}

// waitingEntries puts n insights in c, selects model m@1 of dim
// dimensions, and returns the n entries waiting for a vector.
func waitingEntries(t *testing.T, c *Cache, n, dim int) []PendingText {
	t.Helper()
	ctx := context.Background()
	var entries []memory.Entry
	for i := range n {
		entries = append(entries, mk(memory.TypeInsight, fmt.Sprintf("entry %d", i), time.Hour))
	}
	put(t, c, entries)
	if err := c.UseModel(ctx, "m@1", dim); err != nil {
		t.Fatal(err)
	}
	pending, _, err := c.PendingVectors(ctx, n)
	if err != nil || len(pending) != n {
		t.Fatalf("%d pending, %v", len(pending), err)
	}
	return pending
}

// NearestAlike finds what says nearly the same as the query, from a pool
// much smaller than Nearest's: of 500 entries, the three planted within
// cosine 0.9 of it, nearest first, and no other (not the one planted at
// 0.87); at most n of them.
func TestNearestAlikeFindsTheNearDuplicates(t *testing.T) {
	t.Run("whole scan", func(t *testing.T) { testNearestAlike(t, 64) })
	// 512 bits a vector, as the default model's: the rows' first 128 bits
	// first (signhead.go), on an index small enough for a test
	defer func(rows, keep int) { headRows, headKeep = rows, keep }(headRows, headKeep)
	headRows, headKeep = 100, 40
	t.Run("first words first", func(t *testing.T) { testNearestAlike(t, 512) })
}

func testNearestAlike(t *testing.T, dim int) {
	ctx := context.Background()
	c, q, _ := alikeFixture(t, dim)
	all, err := c.NearestExact(ctx, q, Filter{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, h := range all {
		if h.Cosine >= 0.9 {
			want = append(want, h.ID)
		}
	}
	if len(want) != 3 {
		t.Fatalf("exact search finds %d within 0.9, want the 3 planted", len(want))
	}
	for _, n := range []int{5, 2} {
		got, err := c.NearestAlike(ctx, func() ([]float32, error) { return q, nil }, Filter{}, n, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range got {
			ids = append(ids, h.ID)
		}
		if w := want[:min(n, len(want))]; !slices.Equal(ids, w) {
			t.Fatalf("n=%d: %v, want %v", n, ids, w)
		}
	}
}

// NearestAlike reads the float vectors of no row whose two bits a
// dimension say it cannot lie within its cosine (alikeSlack): of 500
// entries, only the four planted near the query are scored (the one at
// 0.87 may lie within 0.9 by its bits), and a query near none scores
// none; neither looks further.
func TestNearestAlikeScoresOnlyWhatMayLieNear(t *testing.T) {
	ctx := context.Background()
	defer func(rows, keep int) { headRows, headKeep = rows, keep }(headRows, headKeep)
	headRows, headKeep = 100, 40
	c, q, random := alikeFixture(t, 512)
	for _, tc := range []struct {
		name   string
		q      []float32
		scored int
	}{{"near four", q, 4}, {"near none", random(), 0}} {
		vq, err := c.planNearest(ctx, Filter{}, 5, alikePool*5, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		vq.rank(tc.q)
		if len(vq.ranked) != rerankPool*alikePool*5 {
			t.Fatalf("%s: %d rows ranked, want %d", tc.name, len(vq.ranked), rerankPool*alikePool*5)
		}
		clear(c.admits.sets)
		scored, whole, err := c.coarse(ctx, vq, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if len(scored) != tc.scored || !whole {
			t.Errorf("%s: %d rows scored (whole %v), want %d and no other looked for", tc.name, len(scored), whole, tc.scored)
		}
		if c.admits.sets[vq.key] != nil {
			t.Errorf("%s: the rows were ranked again among those the filter admits, for nothing", tc.name)
		}
		for _, s := range scored {
			if s.cos < 0.85 {
				t.Errorf("%s: row %d at cosine %.3f was scored", tc.name, s.rowid, s.cos)
			}
		}
	}
}

// alikeFixture is a cache of 500 entries with random vectors of dim
// dimensions, four of them planted near q (cosines about 0.98, 0.96, 0.93
// and 0.87), and the random vectors' source.
func alikeFixture(t *testing.T, dim int) (*Cache, []float32, func() []float32) {
	ctx := context.Background()
	c, _ := newCache(t)
	pending := waitingEntries(t, c, 500, dim)
	rng := rand.New(rand.NewSource(11))
	random := func() []float32 {
		v := make([]float32, dim)
		var n float64
		for i := range v {
			v[i] = float32(rng.NormFloat64())
			n += float64(v[i]) * float64(v[i])
		}
		for i := range v {
			v[i] /= float32(math.Sqrt(n))
		}
		return v
	}
	q := random()
	// near(w) has cosine about 1/sqrt(1+w²) with q
	near := func(w float64) []float32 {
		r := random()
		v := make([]float32, dim)
		var n float64
		for i := range v {
			v[i] = q[i] + float32(w)*r[i]
			n += float64(v[i]) * float64(v[i])
		}
		for i := range v {
			v[i] /= float32(math.Sqrt(n))
		}
		return v
	}
	vecs := make([][]float32, len(pending))
	for i := range vecs {
		vecs[i] = random()
	}
	for _, p := range []struct {
		i int
		w float64
	}{{17, 0.2}, {250, 0.3}, {444, 0.4}, {333, 0.57}} {
		vecs[p.i] = near(p.w)
	}
	if err := c.StoreVectors(ctx, pending, vecs); err != nil {
		t.Fatal(err)
	}
	return c, q, random
}

// A vector store of the first layout (vectors, keyed WITHOUT ROWID) is
// moved into vecs when a process attaches it: every vector once, none
// embedded again, the index untouched, however many batches a process
// killed midway left behind and however many processes attach at once;
// what a process of an older version stores in the first table later is
// moved by the next to attach.
func TestAStoreOfTheFirstLayoutIsMovedOnce(t *testing.T) {
	ctx := context.Background()
	defer func(n int) { moveBatch = n }(moveBatch)
	moveBatch = 7
	c, path := newCache(t)
	pending := waitingEntries(t, c, 40, 8)
	vecs := make([][]float32, len(pending))
	for i := range vecs {
		vecs[i] = unit(i % 3)
		vecs[i][7] = float32(i) // each its own
	}
	if err := c.StoreVectors(ctx, pending, vecs); err != nil {
		t.Fatal(err)
	}
	if err := c.SaveTextVectors(ctx, []string{"a template"}, [][]float32{unit(2)}); err != nil {
		t.Fatal(err)
	}
	want, err := c.SemanticSearch(ctx, SemanticQuery{Vector: unit(1), Mode: ModeVector}, Filter{Limit: 10})
	if err != nil || len(want) != 10 {
		t.Fatalf("before: %d hits, %v", len(want), err)
	}
	c.Close()
	store := func(q string, args ...any) {
		t.Helper()
		db, err := sql.Open("sqlite3", VectorsPath(path))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	// the first layout, with another model's vectors beside, and one
	// batch moved by a process killed before the next
	store(`CREATE TABLE vectors(model TEXT NOT NULL, hash BLOB NOT NULL, vec BLOB NOT NULL, PRIMARY KEY(model, hash)) WITHOUT ROWID;
		INSERT INTO vectors SELECT model, hash, vec FROM vecs; DROP TABLE vecs;
		INSERT INTO vectors SELECT 'other@2', hash, vec FROM vectors`)
	store(`CREATE TABLE vecs(id INTEGER PRIMARY KEY, model TEXT NOT NULL, hash BLOB NOT NULL, vec BLOB NOT NULL);
		CREATE UNIQUE INDEX vecs_key ON vecs(model, hash);
		INSERT INTO vecs(model, hash, vec) SELECT model, hash, vec FROM vectors ORDER BY model, hash LIMIT 7;
		DELETE FROM vectors WHERE (model, hash) IN (SELECT model, hash FROM vectors ORDER BY model, hash LIMIT 7)`)

	var mu sync.Mutex
	var moved []int
	open := func() *Cache {
		t.Helper()
		c, rebuilt, err := Open(path, 0)
		if err != nil || rebuilt {
			t.Fatalf("open: %v %v", err, rebuilt)
		}
		c.NoticeMoves(func(n int, done bool, _ time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			if done {
				moved = append(moved, n)
			}
		})
		return c
	}
	counts := func(c *Cache) (first, second int) {
		t.Helper()
		if err := c.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM vs.vectors), (SELECT count(*) FROM vs.vecs)`).Scan(&first, &second); err != nil {
			t.Fatal(err)
		}
		return first, second
	}
	// two processes attach the store at once
	cs := []*Cache{open(), open()}
	var wg sync.WaitGroup
	errs := make([]error, len(cs))
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.UseModel(ctx, "m@1", 8)
		}()
	}
	wg.Wait()
	for i, c := range cs {
		defer c.Close()
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
	}
	total := 0
	for _, n := range moved {
		total += n
	}
	if first, second := counts(cs[0]); first != 0 || second != 2*41 || total != 2*41-7 {
		t.Fatalf("moved: %d vectors left in the first table, %d in the second, %d moved (%v), want 0, %d, %d", first, second, total, moved, 2*41, 2*41-7)
	}
	for _, c := range cs {
		if n, err := c.PendingCount(ctx); err != nil || n != 0 {
			t.Fatalf("after the move, %d entries wait for a vector (%v)", n, err)
		}
		got, err := c.SemanticSearch(ctx, SemanticQuery{Vector: unit(1), Mode: ModeVector}, Filter{Limit: 10})
		if err != nil || fmt.Sprint(ids(got)) != fmt.Sprint(ids(want)) {
			t.Fatalf("after the move: %v (%v), want %v", ids(got), err, ids(want))
		}
		if tv, err := c.TextVectors(ctx, []string{"a template"}); err != nil || tv[0] == nil || tv[0][2] != unit(2)[2] {
			t.Fatalf("a template's vector after the move: %v %v", tv, err)
		}
	}
	// an older version stores a vector in the first table: moved at the
	// next attach, and nothing to tell when there is nothing to move
	moved = nil
	store(`INSERT INTO vectors(model, hash, vec) VALUES('m@1', ?, ?)`, textHash("stored by an older version"), encodeVec(unit(0)))
	for range 2 {
		c := open()
		if err := c.UseModel(ctx, "m@1", 8); err != nil {
			t.Fatal(err)
		}
		tv, err := c.TextVectors(ctx, []string{"stored by an older version"})
		if err != nil || tv[0] == nil {
			t.Fatalf("a vector stored by an older version: %v %v", tv, err)
		}
		c.Close()
	}
	if fmt.Sprint(moved) != "[1]" {
		t.Fatalf("moves told: %v, want [1]", moved)
	}
}

func ids(hs []Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return out
}

// Two processes that find the same entries waiting restore them once
// between them: the one that gets the write lock second finds none left,
// where it wrote every vector again (sqlite-vec keeps a replaced vector's
// slot: the index grew by as many slots again).
func TestRestoresAtOnceWriteEachVectorOnce(t *testing.T) {
	ctx := context.Background()
	const n = 3000 // three of sqlite-vec's chunks of 1,024
	c := rebuiltWithStore(t, n, nil)
	other, _, err := Open(c.path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.UseModel(ctx, "m@1", 8); err != nil {
		t.Fatal(err)
	}
	// a third writer holds the lock while both begin
	db, err := sql.Open("sqlite3", c.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lock, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	restored := make(chan int, 2)
	for _, x := range []*Cache{c, other} {
		go func() {
			got, err := x.RestoreVectors(ctx, nil)
			if err != nil {
				t.Error(err)
			}
			restored <- got
		}()
	}
	time.Sleep(300 * time.Millisecond) // both waiting for the lock
	if _, err := lock.ExecContext(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	if total := <-restored + <-restored; total != n {
		t.Errorf("the two restores took back %d vectors between them, want %d", total, n)
	}
	var chunks, rows int
	if err := c.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM vec_bits_chunks), (SELECT count(*) FROM vec_bits)`).Scan(&chunks, &rows); err != nil {
		t.Fatal(err)
	}
	if chunks != 3 || rows != n {
		t.Errorf("the index holds %d rows in %d chunks, want %d in 3", rows, chunks, n)
	}
}

// Two processes that read the same waiting entries and store their
// vectors (two embedders, or two restores by lookups) write each vector
// once: the second stores none, and the index holds a row a vector. An
// entry whose text changed after it was read keeps waiting, for its new
// text's vector.
func TestVectorsStoredTwiceAreWrittenOnce(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	const n, dim = 2500, 8
	pending := waitingEntries(t, c, n, dim)
	other, _, err := Open(c.path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.UseModel(ctx, "m@1", dim); err != nil {
		t.Fatal(err)
	}
	read, _, err := other.PendingVectors(ctx, n)
	if err != nil || len(read) != n {
		t.Fatalf("the other read %d waiting, %v", len(read), err)
	}
	if _, err := c.db.ExecContext(ctx, `UPDATE entries SET content = 'changed' WHERE rowid = ?`, pending[7].RowID); err != nil {
		t.Fatal(err)
	}
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = unit(i % dim)
	}
	if err := c.StoreVectors(ctx, pending, vecs); err != nil {
		t.Fatal(err)
	}
	if err := other.StoreVectors(ctx, read, vecs); err != nil {
		t.Fatal(err)
	}
	var chunks, rows, waiting int
	if err := c.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM vec_bits_chunks), (SELECT count(*) FROM vec_bits), (SELECT count(*) FROM vec_pending)`).Scan(&chunks, &rows, &waiting); err != nil {
		t.Fatal(err)
	}
	if chunks != 3 || rows != n-1 || waiting != 1 {
		t.Errorf("the index holds %d rows in %d chunks with %d waiting, want %d in 3 with 1", rows, chunks, waiting, n-1)
	}
	again, _, err := c.PendingVectors(ctx, n)
	if err != nil || len(again) != 1 || again[0].Text != "changed" {
		t.Errorf("waiting %+v (%v), want the changed entry", again, err)
	}
}

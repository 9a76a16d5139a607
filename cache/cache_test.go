package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
	"github.com/git-synaptic/git-synaptic/rank"
)

func newCache(t *testing.T) (*Cache, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "synaptic", "cache.db")
	c, rebuilt, err := Open(p, 0)
	if err != nil || rebuilt {
		t.Fatalf("open: %v %v", err, rebuilt)
	}
	t.Cleanup(func() { c.Close() })
	return c, p
}

func put(t *testing.T, c *Cache, entries []memory.Entry, ops ...memory.Op) {
	t.Helper()
	ctx := context.Background()
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		doc, _ := memory.EncodeEntry(e)
		if err := tx.PutEntry(e, "refs/synaptic/memory", false, doc); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range ops {
		doc, _ := memory.EncodeOp(o)
		if err := tx.PutOp(o, doc); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func mk(typ memory.Type, content string, age time.Duration, tags ...string) memory.Entry {
	return memory.Entry{V: 1, ID: memory.NewID(), Type: typ, Content: content, Tags: tags, Author: "Ann <ann@x>", Created: time.Now().Add(-age).UTC()}
}

func TestSearchListFilterAndFold(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	pg := mk(memory.TypeDecision, "we chose postgres for billing transactions", 48*time.Hour, "db")
	redis := mk(memory.TypeInsight, "redis caching halves latency", time.Hour, "cache")
	flaky := mk(memory.TypeIssue, "postgres vacuum makes tests flaky", 10*24*time.Hour)
	put(t, c, []memory.Entry{pg, redis, flaky})

	hits, err := c.Search(ctx, "Postgres billing!", Filter{})
	if err != nil || len(hits) != 2 || hits[0].ID != pg.ID {
		t.Fatalf("search: %v %+v", err, hits)
	}
	if hits, _ := c.Search(ctx, "postgres", Filter{Types: []memory.Type{memory.TypeIssue}}); len(hits) != 1 || hits[0].ID != flaky.ID {
		t.Fatalf("type filter: %+v", hits)
	}
	if hits, _ := c.Search(ctx, "billing", Filter{Tags: []string{"DB"}}); len(hits) != 1 {
		t.Fatalf("tag filter: %+v", hits)
	}
	if _, err := c.Search(ctx, `"(*) -- !!`, Filter{}); !errors.Is(err, ErrNoWords) {
		t.Fatalf("no words: %v", err)
	}
	if _, err := c.Search(ctx, `NEAR(a b) OR "x`, Filter{}); err != nil {
		t.Fatalf("fts syntax leaked into the query: %v", err)
	}
	rows, _ := c.List(ctx, Filter{Since: time.Now().Add(-72 * time.Hour)})
	if len(rows) != 2 || rows[0].ID != redis.ID {
		t.Fatalf("list since, newest first: %+v", rows)
	}

	// Ops re-fold the entry: archive hides it, an edit changes what matches.
	at := time.Now().UTC()
	newText := "we chose cockroachdb for billing"
	put(t, c, nil,
		memory.Op{V: 1, ID: memory.NewID(), Entry: pg.ID, Kind: memory.OpEdit, Clock: 1, At: at, Content: &newText, AddTags: []string{"crdb"}},
		memory.Op{V: 1, ID: memory.NewID(), Entry: redis.ID, Kind: memory.OpArchive, Clock: 1, At: at})
	if hits, _ := c.Search(ctx, "cockroachdb", Filter{}); len(hits) != 1 || hits[0].Edits != 1 {
		t.Fatalf("edit not indexed: %+v", hits)
	}
	if hits, _ := c.Search(ctx, "postgres transactions", Filter{}); len(hits) != 1 || hits[0].ID != flaky.ID {
		t.Fatalf("old content still matches: %+v", hits)
	}
	if rows, _ := c.List(ctx, Filter{}); len(rows) != 2 {
		t.Fatalf("archived listed: %d", len(rows))
	}
	if rows, _ := c.List(ctx, Filter{OnlyArchived: true}); len(rows) != 1 || rows[0].ID != redis.ID {
		t.Fatalf("only archived: %+v", rows)
	}
	st, _ := c.Stats(ctx)
	if st.Total != 3 || st.Archived != 1 || st.ByType["decision"] != 1 {
		t.Fatalf("stats: %+v", st)
	}
}

func TestResolvePrefixes(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	a := mk(memory.TypeInsight, "a", 0)
	b := mk(memory.TypeInsight, "b", 0)
	a.ID = "abcd0000000000000000000000000001"
	b.ID = "abcd0000000000000000000000000002"
	put(t, c, []memory.Entry{a, b})
	if id, err := c.Resolve(ctx, "ABCD00000000000000000000000000010"[:32]); err != nil || id != a.ID {
		t.Fatalf("full id: %v %v", id, err)
	}
	if _, err := c.Resolve(ctx, "abcd"); !errors.Is(err, ErrAmbiguous) {
		t.Fatalf("ambiguous: %v", err)
	}
	for _, bad := range []string{"abc", "zzzz", "ffff", "ab'; drop table entries; --"} {
		if _, err := c.Resolve(ctx, bad); !errors.Is(err, ErrNotFound) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// v15Only takes out of a cache what v15 added.
var v15Only = []string{`DROP INDEX entries_anchor`, `ALTER TABLE entries DROP COLUMN anchor`, `ALTER TABLE entries DROP COLUMN verified`,
	`ALTER TABLE entries DROP COLUMN files`, `DROP TABLE lineage`, `DROP TABLE lineage_heads`, `DROP TABLE patch_ids`, `DROP TABLE file_changes`}

// A session counts an entry once, however often it is shown it; uses
// outside a session count each time; only reads count as reads.
func TestUsesCountOncePerSession(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, u := range []Use{
		{IDs: []string{"aaaa", "bbbb"}, At: at, Session: "s1"},
		{IDs: []string{"aaaa"}, At: at.Add(time.Hour), Session: "s1"},
		{IDs: []string{"aaaa"}, At: at.Add(2 * time.Hour), Session: "s2"},
		{IDs: []string{"bbbb"}, At: at, Read: true},
		{IDs: []string{"bbbb"}, At: at, Read: true},
	} {
		if err := c.RecordUse(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string][2]int{"aaaa": {2, 0}, "bbbb": {3, 2}} {
		var count, reads int
		if err := c.db.QueryRow(`SELECT count, reads FROM access WHERE id = ?`, id).Scan(&count, &reads); err != nil || [2]int{count, reads} != want {
			t.Errorf("%s: count %d reads %d, want %v (%v)", id, count, reads, want, err)
		}
	}
	if last, _ := c.LastAccess(ctx, []string{"aaaa"}); !last["aaaa"].Equal(at.Add(2 * time.Hour)) {
		t.Errorf("last use: %v", last)
	}
}

// A pass judges the entries due only: new ones, those used or changed
// since, those whose Next has come; every entry after a v16 cache is
// upgraded, after the usage store is lost, or when the clock goes back.
func TestDecayPassJudgesWhatIsDue(t *testing.T) {
	t.Run("indexes kept up", decayPassJudgesWhatIsDue)
	t.Run("indexes made again", func(t *testing.T) {
		defer func(n int) { bigPass = n }(bigPass)
		bigPass = 1
		decayPassJudgesWhatIsDue(t)
	})
	t.Run("verdicts written two at a time", func(t *testing.T) {
		defer func(n int) { verdictBatch = n }(verdictBatch)
		verdictBatch = 2 // a whole batch, then what is left
		decayPassJudgesWhatIsDue(t)
	})
}

func decayPassJudgesWhatIsDue(t *testing.T) {
	ctx := context.Background()
	c, p := newCache(t)
	a, b, old := mk(memory.TypeInsight, "alpha", time.Hour), mk(memory.TypeIssue, "beta", time.Hour), mk(memory.TypeHandoff, "gamma", time.Hour)
	put(t, c, []memory.Entry{a, b, old})
	now := time.Now()
	pass := func(c *Cache, at time.Time, next map[string]time.Time) []string {
		t.Helper()
		var judged []string
		var told [2]int // the progress last told
		_, err := c.Maintain(ctx, DecayPass{Now: at, Judge: func(st Standing) Verdict {
			judged = append(judged, string(st.Usage.Type))
			return Verdict{Next: next[st.ID]}
		}, Progress: func(done, total int) { told = [2]int{done, total} }})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(judged); told != [2]int{n, n} {
			t.Fatalf("judged %d; the progress last told %v", n, told)
		}
		slices.Sort(judged)
		return judged
	}
	want := func(got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Fatalf("judged %v, want %v", got, want)
		}
	}
	later := map[string]time.Time{a.ID: now.Add(48 * time.Hour), b.ID: now.Add(time.Hour), old.ID: now.Add(48 * time.Hour)}
	want(pass(c, now, later), "handoff", "insight", "issue")
	want(pass(c, now.Add(time.Minute), later))
	want(pass(c, now.Add(2*time.Hour), map[string]time.Time{b.ID: now.Add(100 * time.Hour)}), "issue")
	if err := c.RecordUse(ctx, Use{IDs: []string{old.ID}, At: now}); err != nil {
		t.Fatal(err)
	}
	a.Pinned = true
	put(t, c, []memory.Entry{a})
	want(pass(c, now.Add(3*time.Hour), nil), "handoff", "insight") // nil: never again
	want(pass(c, now.Add(50*time.Hour), nil))
	want(pass(c, now, nil), "handoff", "insight", "issue") // the clock went back
	c.Close()

	// the usage the verdicts came from is gone
	if err := Remove(UsagePath(p)); err != nil {
		t.Fatal(err)
	}
	c, _, err := Open(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	want(pass(c, now, nil), "handoff", "insight", "issue")
	c.Close()

	// a v16 cache had no decay table
	db, _ := sql.Open("sqlite3", p)
	for _, q := range []string{`DROP TABLE decay`, `DROP TRIGGER entries_decay_insert`, `DROP TRIGGER entries_decay_delete`, `DROP TRIGGER entries_decay_update`, `PRAGMA user_version = 16`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	c, rebuilt, err := Open(p, 0)
	if err != nil || rebuilt {
		t.Fatalf("open v16: %v rebuilt=%v", err, rebuilt)
	}
	defer c.Close()
	want(pass(c, now, nil), "handoff", "insight", "issue")
	want(pass(c, now, nil))

	// a verdict that archives leaves the live entries' index without it
	_, err = c.Maintain(ctx, DecayPass{Now: now, All: true, Judge: func(st Standing) Verdict {
		return Verdict{Archived: st.ID == b.ID}
	}})
	var live int
	if err == nil {
		err = c.db.QueryRowContext(ctx, `SELECT count(*) FROM entries INDEXED BY entries_live WHERE `+strings.ReplaceAll(liveOnly, "e.", "")).Scan(&live)
	}
	var indexes int
	if err == nil {
		err = c.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('decay_next', 'entries_live')`).Scan(&indexes)
	}
	if err != nil || live != 2 || indexes != 2 {
		t.Fatalf("after archiving one of three: %d live, %d of 2 indexes (%v)", live, indexes, err)
	}
}

// Search orders BM25 matches as rank.Lexical scores them: relevance
// feedback in SQL is the same factor as in rank (a relevant entry up, an
// irrelevant one down), so the order is by the scores it returns.
func TestSearchRanksByTheFeedbackRankGives(t *testing.T) {
	c, _ := newCache(t)
	ctx := context.Background()
	at := time.Now().UTC()
	var entries []memory.Entry
	for i := range 12 {
		entries = append(entries, mk(memory.TypeDecision, "retry backoff "+strings.Repeat("worker ", i%4)+fmt.Sprint("note ", i), time.Hour))
	}
	var ops []memory.Op
	for i, e := range entries {
		switch i % 3 {
		case 1:
			ops = append(ops, memory.Op{V: 1, ID: memory.NewID(), Entry: e.ID, Kind: memory.OpRelevant, Score: 0.9, Clock: 1, At: at})
		case 2:
			ops = append(ops, memory.Op{V: 1, ID: memory.NewID(), Entry: e.ID, Kind: memory.OpIrrelevant, Clock: 1, At: at})
		}
	}
	put(t, c, entries, ops...)
	hits, err := c.Search(ctx, "retry backoff worker", Filter{Limit: 12})
	if err != nil || len(hits) != 12 {
		t.Fatalf("search: %d hits, %v", len(hits), err)
	}
	var relevant, irrelevant int
	for i, h := range hits {
		if h.Score != rank.Lexical(h.BM25, h.State) {
			t.Errorf("%s: score %v, rank.Lexical %v", h.ID, h.Score, rank.Lexical(h.BM25, h.State))
		}
		if i > 0 && hits[i-1].Score < h.Score-1e-9 {
			t.Errorf("hit %d (score %v) ranks below hit %d (score %v)", i-1, hits[i-1].Score, i, h.Score)
		}
		if h.Irrelevant {
			irrelevant++
		} else if h.Relevance > 0 {
			relevant++
		}
	}
	if relevant != 4 || irrelevant != 4 {
		t.Errorf("feedback not folded: %d relevant, %d irrelevant", relevant, irrelevant)
	}
}

// A rebuild writes each entry with a plain insert; an entry whose id
// clashes with an indexed commit's row (no valid entry id can, but the
// cache must not fail on one) is written over it, as before.
func TestRebuildWritesEntriesAfterAReset(t *testing.T) {
	c, _ := newCache(t)
	ctx := context.Background()
	sha := strings.Repeat("ab", 20)
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.PutCommit(CommitRecord{SHA: sha, Time: time.Now(), Message: "a commit"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	put(t, c, []memory.Entry{mk(memory.TypeDecision, "before the reset", time.Hour)})
	// a reset drops the entries' indexes until its commit makes them
	// again; a reset that ends otherwise leaves them as they were
	indexes := func() string {
		var names string
		if err := c.db.QueryRowContext(ctx, `SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'entries' ORDER BY name)`).Scan(&names); err != nil {
			t.Fatal(err)
		}
		return names
	}
	before := indexes()
	if !strings.Contains(before, "entries_created") || !strings.Contains(before, "entries_live") {
		t.Fatalf("indexes before: %s", before)
	}
	if tx, err = c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Reset(); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	if got := indexes(); got != before {
		t.Fatalf("indexes after a reset rolled back: %s, want %s", got, before)
	}
	if tx, err = c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Reset(); err != nil {
		t.Fatal(err)
	}
	fresh, clash := mk(memory.TypeDecision, "rebuilt entry", time.Hour, "db"), mk(memory.TypeInsight, "clashing entry", time.Hour)
	clash.ID = sha
	for _, e := range []memory.Entry{fresh, clash} {
		doc, _ := memory.EncodeEntry(e)
		if err := tx.PutEntry(e, "refs/synaptic/memory", false, doc); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("a rebuild with a clashing id: %v", err)
	}
	if got := indexes(); got != before {
		t.Fatalf("indexes after the rebuild: %s, want %s", got, before)
	}
	for _, e := range []memory.Entry{fresh, clash} {
		r, err := c.Get(ctx, e.ID)
		if err != nil || r.Content != e.Content {
			t.Fatalf("%s after the rebuild: %+v %v", e.ID, r, err)
		}
	}
	if hits, err := c.Search(ctx, "rebuilt", Filter{}); err != nil || len(hits) != 1 || hits[0].ID != fresh.ID {
		t.Fatalf("search after the rebuild: %+v %v", hits, err)
	}
	if rows, _ := c.List(ctx, Filter{}); len(rows) != 2 {
		t.Fatalf("want the two rebuilt entries, the reset one gone: %d rows", len(rows))
	}
}

// A rebuild writes an entry as it is put and folds in operations read
// after it on commit: an edited or pinned entry comes out the same
// whether its operations were read before or after it, and an entry put
// twice (found in two refs) is written once, as last put.
func TestARebuildFoldsOperationsReadEitherSideOfTheirEntry(t *testing.T) {
	c, _ := newCache(t)
	ctx := context.Background()
	at := time.Now().UTC()
	opsFirst, opsAfter, twice := mk(memory.TypeDecision, "ops read first", time.Hour), mk(memory.TypeDecision, "ops read after", time.Hour), mk(memory.TypeInsight, "in two refs", time.Hour)
	edit := func(e memory.Entry) []memory.Op {
		text := e.Content + ", edited"
		return []memory.Op{{V: 1, ID: memory.NewID(), Entry: e.ID, Kind: memory.OpEdit, Clock: 1, At: at, Content: &text},
			{V: 1, ID: memory.NewID(), Entry: e.ID, Kind: memory.OpPin, Clock: 2, At: at}}
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.Reset(); err != nil {
		t.Fatal(err)
	}
	putEntry := func(e memory.Entry, source string) {
		doc, _ := memory.EncodeEntry(e)
		if err := tx.PutEntry(e, source, false, doc); err != nil {
			t.Fatal(err)
		}
	}
	putOps := func(ops []memory.Op) {
		for _, o := range ops {
			doc, _ := memory.EncodeOp(o)
			if err := tx.PutOp(o, doc); err != nil {
				t.Fatal(err)
			}
		}
	}
	putOps(edit(opsFirst))
	putEntry(opsFirst, "refs/synaptic/memory")
	putEntry(opsAfter, "refs/synaptic/memory")
	putOps(edit(opsAfter))
	putEntry(twice, "refs/synaptic/memory")
	putEntry(twice, "refs/synaptic-local/memory")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, e := range []memory.Entry{opsFirst, opsAfter} {
		r, err := c.Get(ctx, e.ID)
		if err != nil || r.Content != e.Content+", edited" || !r.Pinned || r.Edits != 1 {
			t.Fatalf("%q after the rebuild: %q pinned=%v edits=%d (%v)", e.Content, r.Content, r.Pinned, r.Edits, err)
		}
	}
	if r, err := c.Get(ctx, twice.ID); err != nil || r.Source != "refs/synaptic-local/memory" {
		t.Fatalf("an entry in two refs: from %q, want the last put (%v)", r.Source, err)
	}
	if rows, err := c.List(ctx, Filter{}); err != nil || len(rows) != 3 {
		t.Fatalf("%d rows after the rebuild, want 3 (%v)", len(rows), err)
	}
}

// A transaction whose context ends is not committed.
func TestCancelledTransactionCommitsNothing(t *testing.T) {
	c, _ := newCache(t)
	ctx, cancel := context.WithCancel(context.Background())
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e := mk(memory.TypeDecision, "never committed", time.Hour)
	doc, _ := memory.EncodeEntry(e)
	if err := tx.PutEntry(e, "refs/synaptic/memory", false, doc); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := tx.Commit(); !errors.Is(err, context.Canceled) {
		t.Fatalf("commit after cancel: %v", err)
	}
	if _, err := c.Get(context.Background(), e.ID); err == nil {
		t.Fatal("a cancelled transaction's entry was committed")
	}
	put(t, c, []memory.Entry{mk(memory.TypeDecision, "the next transaction", time.Hour)})
}

// Count is Stats' Total: archived entries counted, commits not.
func TestCountIsStatsTotal(t *testing.T) {
	c, _ := newCache(t)
	ctx := context.Background()
	if n, err := c.Count(ctx); err != nil || n != 0 {
		t.Fatalf("an empty cache counts %d, %v", n, err)
	}
	old := mk(memory.TypeDecision, "archived decision", time.Hour)
	put(t, c, []memory.Entry{old, mk(memory.TypeInsight, "an insight", time.Hour), mk(memory.TypeRule, "a rule", time.Hour)},
		memory.Op{V: 1, ID: memory.NewID(), Entry: old.ID, Kind: memory.OpArchive, Clock: 1, At: time.Now().UTC()})
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.PutCommit(CommitRecord{SHA: strings.Repeat("cd", 20), Time: time.Now(), Message: "a commit"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.Count(ctx)
	if err != nil || n != st.Total || n != 3 || st.Archived != 1 || st.Commits != 1 {
		t.Fatalf("count %d (%v), stats %+v", n, err, st)
	}
}

// SetBusyTimeout changes how long a write waits for another process's
// write on an open cache: a long-lived process serves hooks, which must
// not wait long, and searches, which may.
func TestSetBusyTimeout(t *testing.T) {
	ctx := context.Background()
	c, p := newCache(t) // waits a minute
	other, _, err := Open(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.db.BeginTx(ctx, nil) // _txlock=immediate: holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := c.SetBusyTimeout(100 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = c.SetMeta(ctx, "k", "v")
	if took := time.Since(start); !IsBusy(err) || took > 10*time.Second {
		t.Fatalf("a write under another's lock: %v after %v, want busy after about 100 ms", err, took)
	}
	tx.Rollback()
	if err := c.SetMeta(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
}

// A rebuild drops the per-row insert triggers and does their work on
// commit for every row it wrote: each row is then waiting for its vector
// (or has one) and due for a decay verdict, the entries count as
// changed, and the triggers are back for the writes that follow, as if
// every row had been written one by one. An entry deleted in the rebuild
// leaves nothing behind.
func TestARebuildDoesTheInsertTriggersWorkOnCommit(t *testing.T) {
	c, _ := newCache(t)
	ctx := context.Background()
	put(t, c, []memory.Entry{mk(memory.TypeDecision, "before the reset", time.Hour)})
	gen := func() string {
		v, err := c.Meta(ctx, "entries_gen")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	count := func(q string) int {
		var n int
		if err := c.db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := gen()
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Reset(); err != nil {
		t.Fatal(err)
	}
	gone := mk(memory.TypeIssue, "written then deleted in the rebuild", time.Hour)
	for _, e := range []memory.Entry{mk(memory.TypeDecision, "rebuilt one", time.Hour), mk(memory.TypeInsight, "rebuilt two", 2*time.Hour), gone} {
		doc, _ := memory.EncodeEntry(e)
		if err := tx.PutEntry(e, "refs/synaptic/memory", false, doc); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.DeleteEntry(gone.ID); err != nil {
		t.Fatal(err)
	}
	var during int
	if err := tx.queryRow(`PRAGMA cache_size`).Scan(&during); err != nil || during != -rebuildCacheKiB {
		t.Fatalf("page cache during a rebuild: %d %v, want %d", during, err, -rebuildCacheKiB)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// the one connection goes back to the pool with the usual cache
	if n := count(`PRAGMA cache_size`); n != -cacheKiB {
		t.Fatalf("page cache after a rebuild: %d, want %d", n, -cacheKiB)
	}
	if gen() == before {
		t.Fatalf("entries_gen is %s after a rebuild, as before it", gen())
	}
	check := func(when string, rows int) {
		t.Helper()
		if n := count(`SELECT count(*) FROM entries`); n != rows {
			t.Fatalf("%s: %d rows, want %d", when, n, rows)
		}
		if n := count(`SELECT count(*) FROM entries e WHERE NOT EXISTS (SELECT 1 FROM vec_pending p WHERE p.rowid = e.rowid) AND NOT EXISTS (SELECT 1 FROM vec_state s WHERE s.rowid = e.rowid)`); n != 0 {
			t.Fatalf("%s: %d rows neither wait for a vector nor have one", when, n)
		}
		if n := count(`SELECT count(*) FROM entries e WHERE NOT EXISTS (SELECT 1 FROM decay d WHERE d.rowid = e.rowid AND d.next = 0)`); n != 0 {
			t.Fatalf("%s: %d rows are not due for a decay verdict", when, n)
		}
		if n := count(`SELECT (SELECT count(*) FROM vec_pending) + (SELECT count(*) FROM decay)`); n != 2*rows {
			t.Fatalf("%s: %d rows of vec_pending and decay, want %d", when, n, 2*rows)
		}
	}
	check("after the rebuild", 2)
	tx, err = c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Reset(); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	if n := count(`PRAGMA cache_size`); n != -cacheKiB {
		t.Fatalf("page cache after a rebuild rolled back: %d, want %d", n, -cacheKiB)
	}
	check("after a rebuild rolled back", 2)
	if n := count(`SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ('entries_vec_insert', 'entries_decay_insert')`); n != 2 {
		t.Fatalf("%d of the two insert triggers after the rebuild", n)
	}
	put(t, c, []memory.Entry{mk(memory.TypeDecision, "after the rebuild", time.Hour)})
	check("a save after the rebuild", 3)
}

// A decay pass over most entries drops the row triggers of entries_gen
// and lex_log while it writes, says once after that every row may have
// changed (lex_log's -1: a long-lived process reads its rows again), and
// leaves the triggers and the usual page cache for what follows.
func TestABigDecayPassSaysOnceWhatItsTriggersSay(t *testing.T) {
	defer func(n int) { bigPass = n }(bigPass)
	bigPass = 1
	ctx := context.Background()
	c, _ := newCache(t)
	put(t, c, []memory.Entry{mk(memory.TypeInsight, "alpha", time.Hour), mk(memory.TypeIssue, "beta", time.Hour)})
	value := func(q string) int64 {
		t.Helper()
		var v int64
		if err := c.db.QueryRowContext(ctx, q).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	const gen, lastLogged = `SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'entries_gen'`, `SELECT row FROM lex_log ORDER BY seq DESC LIMIT 1`
	before, logged := value(gen), value(`SELECT count(*) FROM lex_log`)
	judged, err := c.Maintain(ctx, DecayPass{Now: time.Now(), Judge: func(Standing) Verdict { return Verdict{Tier: memory.TierEphemeral} }})
	if err != nil || judged != 2 {
		t.Fatalf("maintain: %d judged, %v", judged, err)
	}
	if got := value(`SELECT count(*) FROM entries WHERE auto_tier = 'ephemeral'`); got != 2 {
		t.Fatalf("%d entries with the verdict, want 2", got)
	}
	if value(gen) != before+1 {
		t.Fatalf("entries_gen %d after the pass, want %d", value(gen), before+1)
	}
	if value(`SELECT count(*) FROM lex_log`) != logged+1 || value(lastLogged) != -1 {
		t.Fatalf("lex_log after the pass: %d rows, the last %d; want %d, -1", value(`SELECT count(*) FROM lex_log`), value(lastLogged), logged+1)
	}
	if n := value(`SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ('entries_gen_update', 'entries_lex_state')`); n != 2 {
		t.Fatalf("%d of the two update triggers after the pass", n)
	}
	if n := value(`PRAGMA cache_size`); n != -cacheKiB {
		t.Fatalf("page cache after the pass: %d, want %d", n, -cacheKiB)
	}
	// the triggers work again
	if _, err := c.db.ExecContext(ctx, `UPDATE entries SET auto_tier = 'working'`); err != nil {
		t.Fatal(err)
	}
	if value(gen) != before+3 || value(lastLogged) < 0 { // a row each
		t.Fatalf("an update after the pass: entries_gen %d, last logged row %d", value(gen), value(lastLogged))
	}
}

// A reset leaves every entry waiting for its decay verdict until a pass
// gives them (Unjudged), however long that takes: a dry run does not,
// and a process killed between the two leaves the mark for the next.
func TestResetLeavesTheCacheUnjudgedUntilAPass(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	put(t, c, []memory.Entry{mk(memory.TypeHandoff, "left off here", 10*24*time.Hour)})
	unjudged := func() bool {
		t.Helper()
		u, err := c.Unjudged(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	if unjudged() {
		t.Fatal("a cache never reset is marked unjudged")
	}
	if err := c.Update(ctx, func(tx *Tx) error { return tx.Reset() }); err != nil {
		t.Fatal(err)
	}
	if !unjudged() {
		t.Fatal("a reset cache is not marked unjudged")
	}
	judge := func(Standing) Verdict { return Verdict{Archived: true} }
	if _, err := c.Maintain(ctx, DecayPass{Now: time.Now(), DryRun: true, Judge: judge}); err != nil || !unjudged() {
		t.Fatalf("a dry run cleared the mark (%v)", err)
	}
	if _, err := c.Maintain(ctx, DecayPass{Now: time.Now(), Judge: judge}); err != nil || unjudged() {
		t.Fatalf("a pass left the mark (%v)", err)
	}
}

package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

func TestCorruptOrOutdatedCacheIsRecreated(t *testing.T) {
	_, p := newCache(t)
	os.WriteFile(p, []byte("this is not a database, it is garbage of some length......"), 0o644)
	os.Remove(p + "-wal")
	os.Remove(p + "-shm")
	c, rebuilt, err := Open(p, 0)
	if err != nil || !rebuilt {
		t.Fatalf("corrupt: %v rebuilt=%v", err, rebuilt)
	}
	c.Close()
	db, _ := sql.Open("sqlite3", p)
	db.Exec(`PRAGMA user_version = 11`) // older than any upgrade
	db.Close()
	c, rebuilt, err = Open(p, 0)
	if err != nil || !rebuilt {
		t.Fatalf("outdated schema: %v rebuilt=%v", err, rebuilt)
	}
	c.Close()
}

// A cache a newer git-synaptic wrote is refused and left as it is: an
// older binary, or a process started before the upgrade, must not
// rebuild it for its own schema.
func TestNewerCacheIsLeftAlone(t *testing.T) {
	c, p := newCache(t)
	put(t, c, []memory.Entry{mk(memory.TypeDecision, "kept by the newer binary", time.Hour)})
	c.Close()
	db, _ := sql.Open("sqlite3", p)
	if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if c, rebuilt, err := Open(p, 0); !errors.Is(err, ErrNewerSchema) || rebuilt {
		if c != nil {
			c.Close()
		}
		t.Fatalf("Open of a newer cache: %v, rebuilt %v; want ErrNewerSchema", err, rebuilt)
	}
	db, _ = sql.Open("sqlite3", p)
	defer db.Close()
	var v, n int
	if err := db.QueryRow(`SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM entries)`).Scan(&v, &n); err != nil || v != SchemaVersion+1 || n != 1 {
		t.Fatalf("the newer cache is at v%d with %d entries (%v), want v%d with 1", v, n, err, SchemaVersion+1)
	}
}

// reopenOlder makes the closed cache at p an older one and opens it: the
// usage store's tables go back into the cache, as before v16, then stmts
// run (v15Only and more to go further back).
func reopenOlder(t *testing.T, p string, stmts ...string) (*Cache, bool, error) {
	t.Helper()
	db, _ := sql.Open("sqlite3", p)
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`ATTACH DATABASE ? AS us`, UsagePath(p)); err != nil {
		t.Fatal(err)
	}
	var back []string
	for _, table := range []string{"access", "used", "injections"} {
		var create string
		if err := db.QueryRow(`SELECT sql FROM us.sqlite_master WHERE name = ?`, table).Scan(&create); err == nil {
			// SQLite keeps the statement as written: CREATE TABLE us.access(...)
			back = append(back, strings.Replace(create, "us.", "main.", 1), `INSERT INTO main.`+table+` SELECT * FROM us.`+table)
		}
	}
	back = append(back, `DETACH DATABASE us`)
	for _, q := range append(back, stmts...) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	if err := Remove(UsagePath(p)); err != nil {
		t.Fatal(err)
	}
	return Open(p, 0)
}

// A v15 cache kept usage in its own tables: they move to the usage store
// and leave the cache.
func TestV15CacheMovesUsageToItsStore(t *testing.T) {
	ctx := context.Background()
	c, p := newCache(t)
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	if err := c.RecordUse(ctx, Use{IDs: []string{"aaaa"}, At: at, Read: true, Session: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CountInjections(ctx, "s", []string{"aaaa"}, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, rebuilt, err := reopenOlder(t, p, `PRAGMA user_version = 15`)
	if err != nil || rebuilt {
		t.Fatalf("open v15: %v rebuilt=%v", err, rebuilt)
	}
	defer c.Close()
	var n int
	if err := c.db.QueryRow(`SELECT count(*) FROM main.sqlite_master WHERE name IN ('access', 'used', 'injections')`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("usage tables left in the cache: %d %v", n, err)
	}
	if last, err := c.LastAccess(ctx, []string{"aaaa"}); err != nil || !last["aaaa"].Equal(at) {
		t.Fatalf("access after the upgrade: %v %v", last, err)
	}
	if err := c.RecordUse(ctx, Use{IDs: []string{"aaaa"}, At: at, Session: "s"}); err != nil {
		t.Fatal(err)
	}
	in, err := c.CountInjections(ctx, "s", []string{"aaaa"}, func(string) bool { return false })
	if err != nil || in["aaaa"] != (Injection{Count: 2, Stale: true}) {
		t.Errorf("injections after the upgrade: %v %v", in, err)
	}
	var count, reads int
	if err := c.db.QueryRow(`SELECT count, reads FROM us.access WHERE id = 'aaaa'`).Scan(&count, &reads); err != nil || count != 1 || reads != 1 {
		t.Errorf("the session's use counted again, or reads lost: count %d reads %d (%v)", count, reads, err)
	}
}

// Usage is not derived from the refs: deleting the cache, or a cache
// SQLite cannot read, rebuilds the index and keeps it. A damaged usage
// store is started afresh without stopping anything.
func TestUsageSurvivesTheCache(t *testing.T) {
	ctx := context.Background()
	c, p := newCache(t)
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	if err := c.RecordUse(ctx, Use{IDs: []string{"aaaa"}, At: at}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	for _, damage := range []func() error{
		func() error { return Remove(p) },
		func() error {
			return os.WriteFile(p, []byte("not a database, not at all, but long enough to be read as one"), 0o644)
		},
	} {
		if err := damage(); err != nil {
			t.Fatal(err)
		}
		c, _, err := Open(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		last, err := c.LastAccess(ctx, []string{"aaaa"})
		c.Close()
		if err != nil || !last["aaaa"].Equal(at) {
			t.Fatalf("uses after the cache was rebuilt: %v %v", last, err)
		}
	}
	if err := os.WriteFile(UsagePath(p), []byte(strings.Repeat("garbage ", 1024)), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _, err := Open(p, 0)
	if err != nil {
		t.Fatalf("a damaged usage store stops the cache: %v", err)
	}
	defer c.Close()
	if last, err := c.LastAccess(ctx, []string{"aaaa"}); err != nil || len(last) != 0 {
		t.Fatalf("a damaged usage store: %v %v", last, err)
	}
	if err := c.RecordUse(ctx, Use{IDs: []string{"aaaa"}, At: at}); err != nil {
		t.Fatalf("a use after the usage store was started afresh: %v", err)
	}
}

// A v14 cache is upgraded in place: its uses survive, and its entries
// gain anchors and the lineage tables.
func TestV14CacheIsUpgradedInPlace(t *testing.T) {
	ctx := context.Background()
	c, p := newCache(t)
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	if err := c.RecordUse(ctx, Use{IDs: []string{"aaaa"}, At: at, Read: true}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, rebuilt, err := reopenOlder(t, p, slices.Concat(v15Only, []string{`PRAGMA user_version = 14`})...)
	if err != nil || rebuilt {
		t.Fatalf("open v14: %v rebuilt=%v", err, rebuilt)
	}
	defer c.Close()
	if last, err := c.LastAccess(ctx, []string{"aaaa"}); err != nil || !last["aaaa"].Equal(at) {
		t.Fatalf("access after the upgrade: %v %v", last, err)
	}
	if err := c.JudgeLine(ctx, "h", []string{"a1", "a2"}, map[string]bool{"a2": true}, at); err != nil {
		t.Fatal(err)
	}
	if off, err := c.OffLine(ctx, "h"); err != nil || len(off) != 1 || !off["a2"] {
		t.Errorf("line verdicts after the upgrade: %v %v", off, err)
	}
}

// A v12 cache is upgraded in place: this clone's usage statistics, which
// the refs cannot give back, survive; injections gain their stale flag.
func TestV12CacheIsUpgradedInPlace(t *testing.T) {
	ctx := context.Background()
	c, p := newCache(t)
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	if err := c.RecordUse(ctx, Use{IDs: []string{"aaaa"}, At: at}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, rebuilt, err := reopenOlder(t, p, slices.Concat(v15Only, []string{`ALTER TABLE injections DROP COLUMN stale`, `ALTER TABLE access DROP COLUMN reads`, `DROP TABLE used`, `PRAGMA user_version = 12`})...)
	if err != nil || rebuilt {
		t.Fatalf("open v12: %v rebuilt=%v", err, rebuilt)
	}
	defer c.Close()
	if last, err := c.LastAccess(ctx, []string{"aaaa", "bbbb"}); err != nil || !last["aaaa"].Equal(at) || len(last) != 1 {
		t.Fatalf("access after the upgrade: %v %v", last, err)
	}
	in, err := c.CountInjections(ctx, "s", []string{"aaaa"}, func(string) bool { return true })
	if err != nil || in["aaaa"] != (Injection{Count: 1, Stale: true}) {
		t.Fatalf("injections after the upgrade: %v %v", in, err)
	}
	in, _ = c.CountInjections(ctx, "s", []string{"aaaa"}, func(string) bool { return false })
	if in["aaaa"] != (Injection{Count: 2, Stale: true}) {
		t.Errorf("the first injection's staleness was not kept: %v", in)
	}
}

// A v13 cache is upgraded in place: its counts survive, with no reads.
func TestV13CacheIsUpgradedInPlace(t *testing.T) {
	ctx := context.Background()
	c, p := newCache(t)
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	if err := c.RecordUse(ctx, Use{IDs: []string{"aaaa"}, At: at, Read: true}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, rebuilt, err := reopenOlder(t, p, slices.Concat(v15Only, []string{`ALTER TABLE access DROP COLUMN reads`, `DROP TABLE used`, `PRAGMA user_version = 13`})...)
	if err != nil || rebuilt {
		t.Fatalf("open v13: %v rebuilt=%v", err, rebuilt)
	}
	defer c.Close()
	if last, err := c.LastAccess(ctx, []string{"aaaa"}); err != nil || !last["aaaa"].Equal(at) {
		t.Fatalf("access after the upgrade: %v %v", last, err)
	}
	if err := c.RecordUse(ctx, Use{IDs: []string{"aaaa"}, At: at, Session: "s", Read: true}); err != nil {
		t.Fatal(err)
	}
	var count, reads int
	if err := c.db.QueryRow(`SELECT count, reads FROM access WHERE id = 'aaaa'`).Scan(&count, &reads); err != nil || count != 2 || reads != 1 {
		t.Fatalf("after the upgrade: count %d reads %d (%v)", count, reads, err)
	}
}

// A v17 cache gains the index of entries not archived, and keeps its
// entries and usage.
func TestV17CacheIsUpgradedInPlace(t *testing.T) {
	ctx := context.Background()
	c, p := newCache(t)
	e := mk(memory.TypeInsight, "kept across the upgrade", time.Hour)
	put(t, c, []memory.Entry{e})
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	if err := c.RecordUse(ctx, Use{IDs: []string{e.ID}, At: at, Read: true}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, rebuilt, err := reopenOlder(t, p, `DROP INDEX entries_live`, `PRAGMA user_version = 17`)
	if err != nil || rebuilt {
		t.Fatalf("open v17: %v rebuilt=%v", err, rebuilt)
	}
	defer c.Close()
	var n int
	if err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'entries_live'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("entries_live after the upgrade: %d %v", n, err)
	}
	if rows, _ := c.List(ctx, Filter{}); len(rows) != 1 || rows[0].ID != e.ID {
		t.Fatalf("entries after the upgrade: %+v", rows)
	}
	if last, err := c.LastAccess(ctx, []string{e.ID}); err != nil || !last[e.ID].Equal(at) {
		t.Fatalf("access after the upgrade: %v %v", last, err)
	}
}

// A v19 cache's change log gains its kind, and changes of entries' other
// columns are logged from then on; its entries stay.
func TestV19CacheIsUpgradedInPlace(t *testing.T) {
	ctx := context.Background()
	c, p := newCache(t)
	e := mk(memory.TypeInsight, "kept across the upgrade", time.Hour)
	put(t, c, []memory.Entry{e})
	c.Close()
	c, rebuilt, err := reopenOlder(t, p, `DROP TRIGGER entries_lex_state`, `ALTER TABLE lex_log DROP COLUMN kind`, `PRAGMA user_version = 19`)
	if err != nil || rebuilt {
		t.Fatalf("open v19: %v rebuilt=%v", err, rebuilt)
	}
	defer c.Close()
	if rows, _ := c.List(ctx, Filter{}); len(rows) != 1 || rows[0].ID != e.ID {
		t.Fatalf("entries after the upgrade: %+v", rows)
	}
	put(t, c, nil, memory.Op{V: 1, ID: memory.NewID(), Entry: e.ID, Kind: memory.OpArchive, Clock: 1, At: time.Now().UTC()})
	var kind int
	if err := c.db.QueryRowContext(ctx, `SELECT kind FROM lex_log ORDER BY seq DESC LIMIT 1`).Scan(&kind); err != nil || kind != 1 {
		t.Fatalf("an archive after the upgrade logged kind %d (%v), want 1", kind, err)
	}
}

// A v20 cache's sign bits lack the magnitude bits: its index is made
// again, and its entries take their vectors back from the vector store,
// embedding nothing.
func TestV20CacheTakesItsVectorsBack(t *testing.T) {
	ctx := context.Background()
	c, p := newCache(t)
	put(t, c, []memory.Entry{mk(memory.TypeInsight, "first", time.Hour), mk(memory.TypeInsight, "second", time.Hour)})
	if err := c.UseModel(ctx, "m@1", 8); err != nil {
		t.Fatal(err)
	}
	pending, _, err := c.PendingVectors(ctx, 10)
	if err != nil || len(pending) != 2 {
		t.Fatalf("%d pending, %v", len(pending), err)
	}
	vecs := [][]float32{{1, 1, 1, 1, 1, 1, 1, 1}, {-1, -1, -1, -1, -1, -1, -1, -1}}
	if err := c.StoreVectors(ctx, pending, vecs); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, rebuilt, err := reopenOlder(t, p, `DROP TABLE vec_bits`, `CREATE VIRTUAL TABLE vec_bits USING vec0(e bit[8])`,
		`INSERT INTO vec_bits(rowid, e) SELECT rowid, vec_quantize_binary(vec_f32('[1,1,1,1,1,1,1,1]')) FROM vec_state`, `PRAGMA user_version = 20`)
	if err != nil || rebuilt {
		t.Fatalf("open v20: %v rebuilt=%v", err, rebuilt)
	}
	defer c.Close()
	if err := c.UseModel(ctx, "m@1", 8); err != nil {
		t.Fatal(err)
	}
	if n, err := c.PendingCount(ctx); err != nil || n != 2 {
		t.Fatalf("%d entries wait for their vectors after the upgrade (%v), want 2", n, err)
	}
	if stored, err := c.WaitingStored(ctx); err != nil || !stored {
		t.Fatalf("the waiting entries' vectors are in the store: %v (%v)", stored, err)
	}
	if n, err := c.RestoreVectors(ctx, nil); err != nil || n != 2 {
		t.Fatalf("restored %d (%v), want 2", n, err)
	}
	for i, want := range pending {
		hits, err := c.Nearest(ctx, vecs[i], Filter{}, 1)
		if err != nil || len(hits) != 1 || hits[0].Content != want.Text {
			t.Fatalf("nearest to %v: %+v (%v), want %q", vecs[i], hits, err, want.Text)
		}
	}
}

// Package cache is git-synaptic's disposable local index: SQLite with FTS5,
// kept in the git common dir. The index holds nothing that cannot be
// rebuilt from the memory refs and git history, so on a schema change or
// corruption it is deleted and rebuilt. Two files beside it outlive it:
// the vector store (vectors.go), so that no text is embedded twice, and
// the usage store (usage.go), the one thing the refs cannot give back. It
// is the only package that imports SQLite.
package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// The cache is disposable, so it trades durability for speed: synchronous=OFF
// survives a killed process (the OS still writes the pages); only a power
// loss can damage it, and a damaged cache is detected and rebuilt.

// SchemaVersion changes whenever the schema or the meaning of a column
// changes; a cache of another version is rebuilt.
const SchemaVersion = 21

// Cache is an open index.
type Cache struct {
	db   *sql.DB
	path string
	busy time.Duration // how long a write waits for another's (SetBusyTimeout)
	// vector store state (vectors.go)
	vsAttached bool
	vecModel   string
	signs      *signIndex    // the sign bits, read on first use (signs.go)
	layout     *liveLayout   // the rows not archived, side by side (livelayout.go)
	retired    []*liveLayout // layouts set aside, their memory given back before the next search
	held       *heldVectors  // float vectors kept in memory (held.go)
	rows       *heldRows     // what filters admit, followed (heldrows.go)
	admits     admitted      // the rows filters admit, for signs (signs.go)
	lex        *lexHolder    // the terms held in memory (lexicon.go)
	aside      *sql.DB       // a second reader of the vector store (vectorsAside)
	// notice is told how a move of the vector store goes (NoticeMoves).
	notice func(moved int, done bool, took time.Duration)
	// fewer names the filters whose best matches Search found to hold
	// too few of the rows they admit (lexical.go).
	fewer map[string]bool
}

// cacheKiB is SQLite's page cache of each connection, in KiB.
const cacheKiB = 64 << 10

const schema = `
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tips(ref TEXT PRIMARY KEY, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries(
	rowid INTEGER PRIMARY KEY,
	id TEXT NOT NULL UNIQUE,
	source TEXT NOT NULL,
	private INTEGER NOT NULL DEFAULT 0,
	type TEXT NOT NULL,
	content TEXT NOT NULL,
	tags TEXT NOT NULL DEFAULT '',
	project TEXT NOT NULL DEFAULT '',
	branch TEXT NOT NULL DEFAULT '',
	session_id TEXT NOT NULL DEFAULT '',
	agent_id TEXT NOT NULL DEFAULT '',
	author TEXT NOT NULL DEFAULT '',
	created INTEGER NOT NULL,
	updated INTEGER NOT NULL,
	tier TEXT NOT NULL,
	tier_explicit INTEGER NOT NULL DEFAULT 0,
	pinned INTEGER NOT NULL DEFAULT 0,
	archived INTEGER NOT NULL DEFAULT 0,
	related TEXT NOT NULL DEFAULT '',
	commit_sha TEXT NOT NULL DEFAULT '',
	edits INTEGER NOT NULL DEFAULT 0,
	doc BLOB,
	auto_tier TEXT NOT NULL DEFAULT '',
	auto_archived INTEGER NOT NULL DEFAULT 0,
	relevance REAL NOT NULL DEFAULT 0,
	irrelevant INTEGER NOT NULL DEFAULT 0,
	anchor TEXT NOT NULL DEFAULT '',
	verified TEXT NOT NULL DEFAULT '',
	files TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS entries_created ON entries(created);
CREATE INDEX IF NOT EXISTS entries_type ON entries(type, created);
CREATE INDEX IF NOT EXISTS entries_session ON entries(session_id, created) WHERE session_id != '';
` + liveIndex + `
CREATE TABLE IF NOT EXISTS entry_tags(tag TEXT NOT NULL, entry INTEGER NOT NULL, PRIMARY KEY(tag, entry)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entry_tags_entry ON entry_tags(entry);
CREATE TABLE IF NOT EXISTS ops(id TEXT PRIMARY KEY, entry TEXT NOT NULL, doc BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS ops_entry ON ops(entry);
CREATE TABLE IF NOT EXISTS problems(source TEXT NOT NULL, path TEXT NOT NULL, object TEXT NOT NULL, message TEXT NOT NULL, PRIMARY KEY(source, path));
CREATE TABLE IF NOT EXISTS commits(sha TEXT PRIMARY KEY, time INTEGER NOT NULL, merge INTEGER NOT NULL DEFAULT 0, files BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS commits_time ON commits(time);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(content, tags, tokenize='porter unicode61');
CREATE TABLE IF NOT EXISTS vec_state(rowid INTEGER PRIMARY KEY, hash BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS vec_pending(rowid INTEGER PRIMARY KEY);
` + vecInsertTrigger + `
CREATE TRIGGER IF NOT EXISTS entries_vec_delete AFTER DELETE ON entries BEGIN ` + bumpEntriesGen + `; DELETE FROM vec_state WHERE rowid=old.rowid; DELETE FROM vec_pending WHERE rowid=old.rowid; END;
` + genUpdateTrigger + `
CREATE TRIGGER IF NOT EXISTS entries_vec_update AFTER UPDATE OF content ON entries WHEN old.content IS NOT new.content BEGIN DELETE FROM vec_state WHERE rowid=old.rowid; INSERT INTO vec_pending(rowid) SELECT old.rowid WHERE NOT EXISTS (SELECT 1 FROM vec_pending WHERE rowid=old.rowid); END;
` + lineageSchema + decaySchema + lexLogSchema

// vecInsertTrigger counts a new entry as a change of the entries
// (entries_gen) and as waiting for its vector.
const vecInsertTrigger = `CREATE TRIGGER IF NOT EXISTS entries_vec_insert AFTER INSERT ON entries BEGIN ` + bumpEntriesGen + `; INSERT INTO vec_pending(rowid) SELECT new.rowid WHERE NOT EXISTS (SELECT 1 FROM vec_pending WHERE rowid=new.rowid); END;`

// bumpEntriesGen counts a change of the entries, as their triggers do
// for each row.
const bumpEntriesGen = `INSERT INTO meta(key, value) VALUES('entries_gen', '1') ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`

// genUpdateTrigger counts a changed entry as a change of the entries
// (entries_gen).
const genUpdateTrigger = `CREATE TRIGGER IF NOT EXISTS entries_gen_update AFTER UPDATE ON entries BEGIN ` + bumpEntriesGen + `; END;`

// decayInsertTrigger makes a new entry due for a decay verdict.
const decayInsertTrigger = `CREATE TRIGGER IF NOT EXISTS entries_decay_insert AFTER INSERT ON entries BEGIN INSERT INTO decay(rowid, next) VALUES(new.rowid, 0) ON CONFLICT(rowid) DO UPDATE SET next = 0; END;`

// insertTriggers are the triggers on a new entry that Tx.Reset drops
// while it writes every row, by name; Commit does their work for all the
// new rows in one statement each (Tx.afterReset) and makes them again.
var insertTriggers = map[string]string{"entries_vec_insert": vecInsertTrigger, "entries_decay_insert": decayInsertTrigger}

// lexLogSchema logs the rowid of every entry that came, changed or went,
// for what a long-lived process keeps of the rows and follows: kind 0
// when its text changed (the fts table changes with it: the lexicon,
// lexindex.go), 1 when only its other columns did (the rows filters
// admit and the vectors held by row, heldrows.go). A reset drops the
// triggers while it rewrites every row and logs -1 (read everything)
// when it ends (Tx.Reset).
const lexLogSchema = `
CREATE TABLE IF NOT EXISTS lex_log(seq INTEGER PRIMARY KEY AUTOINCREMENT, row INTEGER NOT NULL, kind INTEGER NOT NULL DEFAULT 0);
` + lexTriggers

// lexTriggerNames are lexTriggers' names, which Tx.Reset drops.
var lexTriggerNames = []string{"entries_lex_insert", "entries_lex_delete", "entries_lex_update", "entries_lex_state"}

// lexTriggers write lex_log.
const lexTriggers = `
CREATE TRIGGER IF NOT EXISTS entries_lex_insert AFTER INSERT ON entries BEGIN INSERT INTO lex_log(row) VALUES(new.rowid); END;
CREATE TRIGGER IF NOT EXISTS entries_lex_delete AFTER DELETE ON entries BEGIN INSERT INTO lex_log(row) VALUES(old.rowid); END;
CREATE TRIGGER IF NOT EXISTS entries_lex_update AFTER UPDATE OF content, tags ON entries WHEN old.content IS NOT new.content OR old.tags IS NOT new.tags BEGIN INSERT INTO lex_log(row) VALUES(new.rowid); END;
CREATE TRIGGER IF NOT EXISTS entries_lex_state AFTER UPDATE ON entries WHEN old.content IS new.content AND old.tags IS new.tags BEGIN INSERT INTO lex_log(row, kind) VALUES(new.rowid, 1); END;
`

// v18to19 adds lex_log (as v20 has it).
const v18to19 = lexLogSchema

// v19to20 logs the changes of entries' other columns in lex_log.
const v19to20 = `ALTER TABLE lex_log ADD COLUMN kind INTEGER NOT NULL DEFAULT 0;` + lexTriggers

// v20to21 makes vec_bits again with the magnitude bits beside the signs:
// the active model is forgotten, so that the next UseModel makes the
// table and every entry waits for its vector, which the first search or
// embed takes back from the vector store in one pass (RestoreVectors).
const v20to21 = unindexVectors + `DELETE FROM meta WHERE key = 'vec_model';` + bumpMade + `;`

// liveIndex lists the entries not archived by type, for the sets of rows
// a search's filter admits (signs.go), which a long-lived process
// builds again whenever memory changes: read from the entries, for their
// archived flags, that took 490 ms at 300k entries, 65 ms from this index.
// Its condition is spelled as no other query spells it, so that only
// those sets use it: lists and searches are faster by their own indexes.
const liveIndex = `CREATE INDEX IF NOT EXISTS entries_live ON entries(type) WHERE archived + auto_archived = 0;`

// liveOnly is liveIndex's condition (Filter.admitting).
const liveOnly = `e.archived + e.auto_archived = 0`

// v17to18 adds liveIndex.
const v17to18 = liveIndex

// decaySchema holds when each entry's decay verdict must next be
// recomputed (maintain.go): now for a new entry or one whose authored
// state changed (the triggers), later for one judged since.
const decaySchema = `
CREATE TABLE IF NOT EXISTS decay(rowid INTEGER PRIMARY KEY, next INTEGER NOT NULL);
` + decayIndex + `
` + decayInsertTrigger + `
CREATE TRIGGER IF NOT EXISTS entries_decay_delete AFTER DELETE ON entries BEGIN DELETE FROM decay WHERE rowid=old.rowid; END;
CREATE TRIGGER IF NOT EXISTS entries_decay_update AFTER UPDATE OF type, created, updated, tier, tier_explicit, pinned, archived ON entries BEGIN INSERT INTO decay(rowid, next) VALUES(new.rowid, 0) ON CONFLICT(rowid) DO UPDATE SET next = 0; END;
`

// decayIndex finds the entries due for a decay verdict.
const decayIndex = `CREATE INDEX IF NOT EXISTS decay_next ON decay(next);`

// v16to17 adds the decay table, every entry due.
const v16to17 = decaySchema + `INSERT OR REPLACE INTO decay(rowid, next) SELECT rowid, 0 FROM entries;`

// lineageSchema holds what the cache knows of the code (lineage.go):
// which anchors are off each recent HEAD's line, patch ids, and how many
// commits changed a file between two commits.
const lineageSchema = `
CREATE INDEX IF NOT EXISTS entries_anchor ON entries(anchor) WHERE anchor != '';
CREATE TABLE IF NOT EXISTS lineage(head TEXT NOT NULL, anchor TEXT NOT NULL, off INTEGER NOT NULL, PRIMARY KEY(head, anchor)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lineage_heads(head TEXT PRIMARY KEY, used INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS patch_ids(key TEXT PRIMARY KEY, pid TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS file_changes(head TEXT NOT NULL, base TEXT NOT NULL, path TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY(head, base, path)) WITHOUT ROWID;
`

// v14to15 adds entries' anchors and files, and the lineage tables. No
// entry indexed before v15 has an anchor: this version writes the first.
const v14to15 = `ALTER TABLE entries ADD COLUMN anchor TEXT NOT NULL DEFAULT '';
ALTER TABLE entries ADD COLUMN verified TEXT NOT NULL DEFAULT '';
ALTER TABLE entries ADD COLUMN files TEXT NOT NULL DEFAULT '';` + lineageSchema

// v13to14 adds what v14 knows of uses: deliberate reads apart, and the
// sessions that have counted an entry.
const v13to14 = `ALTER TABLE access ADD COLUMN reads INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS used(session TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY(session, id)) WITHOUT ROWID;`

// Open opens (creating if needed) the cache at path. A file of an older
// schema version than this code upgrades, or one SQLite cannot read, is
// deleted and recreated empty; rebuilt reports that, so the caller knows
// to reindex. A file of a newer version is left as it is (ErrNewerSchema).
//
// busy is how long a write waits for another process's write to finish
// (0: a minute); git hooks use a short one so they never hold git up.
func Open(path string, busy time.Duration) (c *Cache, rebuilt bool, err error) {
	if busy <= 0 {
		busy = time.Minute
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, false, fmt.Errorf("cache dir: %w", err)
	}
	// SQLite's busy handler does not cover every lock a new connection
	// meets (a WAL database that the last connection of another process
	// is checkpointing as it closes answers busy at once): wait for those
	// too, up to busy.
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if c, err = open(path, busy); !IsBusy(err) || time.Since(start) > busy {
			break
		}
	}
	if err == nil {
		return c, false, nil
	}
	if !IsCorrupt(err) && !errors.Is(err, errOldSchema) {
		return nil, false, err
	}
	if err := Remove(path); err != nil {
		return nil, false, err
	}
	c, err = open(path, busy)
	return c, true, err
}

var errOldSchema = errors.New("cache schema changed")

// ErrNewerSchema says the cache was written by a newer git-synaptic than
// this one. Open leaves it alone: deleting it here, as it did, made an MCP
// server or warm process started before an upgrade rebuild the cache for
// its old schema, and the new binary then rebuilt it again (a reindex:
// minutes at a million entries).
var ErrNewerSchema = errors.New("the cache was written by a newer git-synaptic")

func open(path string, busy time.Duration) (*Cache, error) {
	// Prepared statements are kept per connection (64): a long-lived
	// process asks the same queries on every request, and preparing them
	// again took about 1.3 ms of a warm prompt hook's 8 at 10k entries.
	dsn := fmt.Sprintf("file:%s?_journal_mode=WAL&_busy_timeout=%d&_synchronous=OFF&_txlock=immediate&_cache_size=-%d&_stmt_cache_size=64", path, busy.Milliseconds(), cacheKiB)
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	// Memory-mapped reads: a CLI process starts with a cold page cache, and
	// a search touches thousands of pages; mmap avoids a syscall per page.
	// Mapped pages count in the process's resident set, so the map stops
	// at 256 MiB of each file (all of it below about 200k entries): at a
	// million entries a gigabyte map made the MCP server's peak RSS
	// 1.5 GB, and 256 MiB searches as fast (make bench BENCH=1M).
	if _, err := db.Exec(`PRAGMA mmap_size = 268435456`); err != nil {
		db.Close()
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		db.Close()
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	if v > SchemaVersion {
		db.Close()
		return nil, fmt.Errorf("%w (schema v%d; this one reads v%d)", ErrNewerSchema, v, SchemaVersion)
	}
	usageNew, err := attachUsage(context.Background(), db, path)
	if err != nil {
		db.Close()
		return nil, err
	}
	switch v {
	case SchemaVersion:
	case 12, 13, 14, 15, 16, 17, 18, 19, 20:
		stmt := upgradeFrom(v)
		if err := upgrade(db, v, stmt); err != nil {
			db.Close()
			return nil, fmt.Errorf("cache %s: upgrade schema: %w", path, err)
		}
	case 0:
		if err := upgrade(db, 0, schema); err != nil {
			db.Close()
			return nil, fmt.Errorf("cache %s: create schema: %w", path, err)
		}
	default:
		db.Close()
		return nil, fmt.Errorf("%w (found v%d, want v%d)", errOldSchema, v, SchemaVersion)
	}
	if usageNew && v != 0 {
		// verdicts judged from the usage that is gone are judged again
		if _, err := db.Exec(`UPDATE decay SET next = 0`); err != nil {
			db.Close()
			return nil, fmt.Errorf("cache %s: %w", path, err)
		}
	}
	return &Cache{db: db, path: path, busy: busy}, nil
}

// upgradeFrom is the statements that upgrade a cache of version v (12
// to SchemaVersion-1) in place, so that this clone's usage statistics
// survive: v12 lacks injections.stale, v13 the reads and the
// once-per-session uses, v14 the anchors, v15 keeps usage in the cache
// rather than the usage store, v16 judges every entry's decay at every
// pass, v17 lacks liveIndex and v18 lex_log, v19 its changes of columns
// other than the text, v20 the magnitude bits.
func upgradeFrom(v int) string {
	stmt := v20to21
	if v <= 18 {
		stmt = v18to19 + stmt
	} else if v == 19 {
		stmt = v19to20 + stmt
	}
	for _, step := range []struct {
		upTo int
		ddl  string
	}{{17, v17to18}, {16, v16to17}, {15, v15to16}, {14, v14to15}, {13, v13to14}, {12, `ALTER TABLE injections ADD COLUMN stale INTEGER NOT NULL DEFAULT 0;`}} {
		if v <= step.upTo {
			stmt = step.ddl + stmt
		}
	}
	return stmt
}

// upgrade brings a cache of version from (0: a new, empty one) to
// SchemaVersion with stmt in one transaction, unless another process did
// first.
func upgrade(db *sql.DB, from int, stmt string) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	if v != from {
		return nil
	}
	if _, err := tx.Exec(stmt); err != nil {
		if strings.Contains(err.Error(), "no such module: fts5") {
			return fmt.Errorf("%w: this binary was built without SQLite FTS5; build it with 'make' (go build -tags sqlite_fts5)", err)
		}
		return err
	}
	if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, SchemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// Remove deletes a cache file and its WAL side files.
func Remove(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove cache: %w", err)
		}
	}
	return nil
}

// IsCorrupt reports whether err says the database file is damaged or not a
// database at all.
func IsCorrupt(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB
	}
	return err != nil && (strings.Contains(err.Error(), "malformed") || strings.Contains(err.Error(), "not a database"))
}

// IsBusy reports whether err says another process held the database
// longer than the busy timeout.
func IsBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

// isConstraint reports a statement refused by a constraint (a unique key).
func isConstraint(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrConstraint
}

// SetBusyTimeout sets how long a write waits for another process's write
// from now on (0: a minute), as Open's busy does: a long-lived process
// serves git hooks, which must not wait long, and searches, which may.
func (c *Cache) SetBusyTimeout(busy time.Duration) error {
	if busy <= 0 {
		busy = time.Minute
	}
	if busy == c.busy {
		return nil
	}
	if _, err := c.db.Exec(fmt.Sprintf(`PRAGMA busy_timeout = %d`, busy.Milliseconds())); err != nil {
		return fmt.Errorf("cache: busy timeout: %w", err)
	}
	c.busy = busy
	return nil
}

// Path is the cache file.
func (c *Cache) Path() string { return c.path }

// Close closes the database.
func (c *Cache) Close() error {
	c.retire()
	c.freeRetired()
	c.lex.stop()
	if c.aside != nil {
		c.aside.Close()
	}
	return c.db.Close()
}

// Tips returns the ref tips the index was built from.
func (c *Cache) Tips(ctx context.Context) (map[string]string, error) {
	return queryTips(ctx, c.db)
}

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func queryTips(ctx context.Context, q querier) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT ref, hash FROM tips`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var r, h string
		if err := rows.Scan(&r, &h); err != nil {
			return nil, err
		}
		out[r] = h
	}
	return out, rows.Err()
}

// Meta reads a value from the meta table ("" when absent).
func (c *Cache) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := c.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key=?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// SetMeta writes a value to the meta table.
func (c *Cache) SetMeta(ctx context.Context, key, value string) error {
	_, err := c.db.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value`, key, value)
	return err
}

// Problem is a memory object that could not be indexed.
type Problem struct {
	Source, Path, Object, Message string
}

// Problems lists what the last indexing runs could not read.
func (c *Cache) Problems(ctx context.Context) ([]Problem, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT source, path, object, message FROM problems ORDER BY source, path`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Problem
	for rows.Next() {
		var p Problem
		if err := rows.Scan(&p.Source, &p.Path, &p.Object, &p.Message); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Counts are how many authored entries the cache holds per source ref, and
// how many operations in all.
type Counts struct {
	Entries map[string]int
	Ops     int
}

// Counts counts the indexed entries by source and the operations, for a
// consistency check against the refs.
func (c *Cache) Counts(ctx context.Context) (Counts, error) {
	out := Counts{Entries: map[string]int{}}
	rows, err := c.db.QueryContext(ctx, `SELECT source, count(*) FROM entries WHERE source != ? GROUP BY source`, HistorySource)
	if err != nil {
		return out, fmt.Errorf("cache: counts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var src string
		var n int
		if err := rows.Scan(&src, &n); err != nil {
			return out, err
		}
		out.Entries[src] = n
	}
	if err := rows.Err(); err != nil {
		return out, err
	}
	err = c.db.QueryRowContext(ctx, `SELECT count(*) FROM ops`).Scan(&out.Ops)
	return out, err
}

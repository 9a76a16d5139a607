package cache

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
)

// The usage store: what this clone has seen of its memory being used
// (uses and reads per entry, the sessions that counted them, injections
// into agent sessions). It cannot be rebuilt from the refs, so it lives in
// a file of its own, usage.db beside the cache, attached to every
// connection as "us": reindex, a schema change or a corrupt cache.db
// rebuild the index and keep it. Decay verdicts are computed from it, so
// they come back with the next maintenance pass. Deleting usage.db resets
// them to the authored dates.

// UsagePath is the usage store of the cache at cachePath.
func UsagePath(cachePath string) string {
	return filepath.Join(filepath.Dir(cachePath), "usage.db")
}

// usageSchema is the usage store's tables, created in the attached "us".
const usageSchema = `
CREATE TABLE IF NOT EXISTS us.access(id TEXT PRIMARY KEY, count INTEGER NOT NULL, last INTEGER NOT NULL, reads INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS us.used(session TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY(session, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS us.injections(session TEXT NOT NULL, id TEXT NOT NULL, count INTEGER NOT NULL, stale INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(session, id)) WITHOUT ROWID;
`

// v15to16 moves the usage a v12-v15 cache kept in its own tables into the
// usage store, adding to what the store holds already (a clone whose cache
// was rebuilt by a newer build, then opened by an older one), and drops
// them from the cache, where they would hide the store's.
const v15to16 = `
INSERT INTO us.access(id, count, last, reads) SELECT id, count, last, reads FROM main.access WHERE true
	ON CONFLICT(id) DO UPDATE SET count=count+excluded.count, last=max(last, excluded.last), reads=reads+excluded.reads;
INSERT OR IGNORE INTO us.used(session, id) SELECT session, id FROM main.used;
INSERT INTO us.injections(session, id, count, stale) SELECT session, id, count, stale FROM main.injections WHERE true
	ON CONFLICT(session, id) DO UPDATE SET count=count+excluded.count;
DROP TABLE main.access;
DROP TABLE main.used;
DROP TABLE main.injections;
`

// attachUsage attaches the usage store (creating it if needed); created
// reports a new one. A store SQLite cannot read is started afresh: it is
// only statistics, and a damaged one must not stop every command.
func attachUsage(ctx context.Context, db *sql.DB, cachePath string) (created bool, err error) {
	path := UsagePath(cachePath)
	if created, err = attachOrRestart(ctx, db, "us", path, "injections", usageSchema); err != nil {
		return false, fmt.Errorf("usage store %s: %w", path, err)
	}
	return created, nil
}

// attachStore attaches the SQLite file at path as alias, a store that
// outlives the cache (the vector and usage stores), and creates its tables
// with ddl when table is not there yet; created reports that it was new.
func attachStore(ctx context.Context, db *sql.DB, alias, path, table, ddl string) (created bool, err error) {
	if _, err := db.ExecContext(ctx, `ATTACH DATABASE ? AS `+alias, path); err != nil {
		return false, err
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+alias+`.sqlite_master WHERE name = ?`, table).Scan(&n); err != nil {
		return false, err
	}
	var qs []string
	if n == 0 {
		// A new store's pages are 16 KB, set before WAL mode writes the
		// first. With SQLite's 4 KB, a vector (2 KB at 512 dimensions)
		// took a page of its own and an overflow page: 4.6 KB each on
		// disk, 1.4 GB at 300k entries; with 16 KB, 2.8 KB. A store
		// created before keeps its pages.
		qs = append(qs, `PRAGMA `+alias+`.page_size=16384`)
	}
	qs = append(qs, `PRAGMA `+alias+`.journal_mode=WAL`, `PRAGMA `+alias+`.synchronous=OFF`)
	if n == 0 {
		qs = append(qs, ddl)
	}
	for _, q := range qs {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return false, err
		}
	}
	return n == 0, nil
}

// attachOrRestart is attachStore, except that a file SQLite cannot read is
// deleted and the store started afresh.
func attachOrRestart(ctx context.Context, db *sql.DB, alias, path, table, ddl string) (created bool, err error) {
	created, err = attachStore(ctx, db, alias, path, table, ddl)
	if !IsCorrupt(err) {
		return created, err
	}
	db.ExecContext(ctx, `DETACH DATABASE `+alias)
	if err := Remove(path); err != nil {
		return false, err
	}
	return attachStore(ctx, db, alias, path, table, ddl)
}

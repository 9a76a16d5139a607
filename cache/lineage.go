package cache

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// What the cache remembers of where memory stands against the code: for
// each of the last few HEADs (worktrees each have their own), which
// entries' anchors are off its line of history; patch ids, which never
// change; and how many commits changed a file between two commits. All of
// it is derived from git and recomputed when missing.

// lineageHeads is how many HEADs keep their verdicts.
const lineageHeads = 8

// encodeEntryFiles and decodeEntryFiles store an entry's recorded files as JSON.
func encodeEntryFiles(files map[string]string) string {
	if len(files) == 0 {
		return ""
	}
	b, _ := json.Marshal(files)
	return string(b)
}

func decodeEntryFiles(s string) map[string]string {
	if s == "" {
		return nil
	}
	var m map[string]string
	if json.Unmarshal([]byte(s), &m) != nil {
		return nil
	}
	return m
}

// UnjudgedAnchors lists the anchors of indexed entries that have no
// verdict for head yet, leaving out entries whose source starts with
// foreign (memory of another repository, whose commits are not this
// one's; "" leaves out none).
//
// It steps from one distinct anchor to the next through entries_anchor (a
// seek each) and reads only enough entries of each to find one that is
// not foreign: a DISTINCT over the entries read every entry, 90 ms of a
// search at 300k entries, where a few thousand anchors are a millisecond.
func (c *Cache) UnjudgedAnchors(ctx context.Context, head, foreign string) ([]string, error) {
	return c.strings(ctx, `WITH RECURSIVE a(anchor) AS (
			SELECT (SELECT min(anchor) FROM entries WHERE anchor != '')
			UNION ALL
			SELECT (SELECT min(anchor) FROM entries WHERE anchor != '' AND anchor > a.anchor) FROM a WHERE a.anchor IS NOT NULL)
		SELECT a.anchor FROM a WHERE a.anchor IS NOT NULL
		AND EXISTS (SELECT 1 FROM entries e WHERE e.anchor != '' AND e.anchor = a.anchor AND (? = '' OR substr(e.source, 1, length(?)) != ?))
		AND NOT EXISTS (SELECT 1 FROM lineage l WHERE l.head=? AND l.anchor=a.anchor)`, foreign, foreign, foreign, head)
}

// OffLine lists the anchors judged off head's line.
func (c *Cache) OffLine(ctx context.Context, head string) (map[string]bool, error) {
	anchors, err := c.strings(ctx, `SELECT anchor FROM lineage WHERE head=? AND off`, head)
	if err != nil {
		return nil, err
	}
	off := make(map[string]bool, len(anchors))
	for _, a := range anchors {
		off[a] = true
	}
	return off, nil
}

// JudgeLine records, for head, whether each of anchors is off its line,
// and forgets the verdicts of all but the most recently used HEADs.
func (c *Cache) JudgeLine(ctx context.Context, head string, anchors []string, off map[string]bool, now time.Time) error {
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, a := range anchors {
		if err := tx.exec(`INSERT OR REPLACE INTO lineage(head, anchor, off) VALUES(?, ?, ?)`, head, a, off[a]); err != nil {
			return err
		}
	}
	if err := tx.exec(`INSERT OR REPLACE INTO lineage_heads(head, used) VALUES(?, ?)`, head, now.UnixNano()); err != nil {
		return err
	}
	if err := tx.exec(`DELETE FROM lineage_heads WHERE head NOT IN (SELECT head FROM lineage_heads ORDER BY used DESC LIMIT ?)`, lineageHeads); err != nil {
		return err
	}
	if err := tx.exec(`DELETE FROM lineage WHERE head NOT IN (SELECT head FROM lineage_heads)`); err != nil {
		return err
	}
	return tx.Commit()
}

// PatchIDs is every patch id known (by commit, or "base..tip").
func (c *Cache) PatchIDs(ctx context.Context) (map[string]string, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT key, pid FROM patch_ids`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, rows.Err()
}

// AddPatchIDs records patch ids.
func (c *Cache) AddPatchIDs(ctx context.Context, pids map[string]string) error {
	if len(pids) == 0 {
		return nil
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for k, v := range pids {
		if err := tx.exec(`INSERT OR IGNORE INTO patch_ids(key, pid) VALUES(?, ?)`, k, v); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// FileChange is how many commits changed Path in Base..Head.
type FileChange struct {
	Head, Base, Path string
	N                int
}

// FileChanges looks up counts recorded for fs (by Head, Base and Path),
// filling in N and reporting which were known.
func (c *Cache) FileChanges(ctx context.Context, fs []FileChange) ([]bool, error) {
	known := make([]bool, len(fs))
	for i := range fs {
		err := c.db.QueryRowContext(ctx, `SELECT n FROM file_changes WHERE head=? AND base=? AND path=?`, fs[i].Head, fs[i].Base, fs[i].Path).Scan(&fs[i].N)
		switch {
		case err == nil:
			known[i] = true
		case !errors.Is(err, sql.ErrNoRows):
			return nil, err
		}
	}
	return known, nil
}

// AddFileChanges records counts, keeping only those of the HEADs whose
// line verdicts are kept.
func (c *Cache) AddFileChanges(ctx context.Context, fs []FileChange) error {
	if len(fs) == 0 {
		return nil
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, f := range fs {
		if err := tx.exec(`INSERT OR REPLACE INTO file_changes(head, base, path, n) VALUES(?, ?, ?, ?)`, f.Head, f.Base, f.Path, f.N); err != nil {
			return err
		}
	}
	if err := tx.exec(`DELETE FROM file_changes WHERE head NOT IN (SELECT head FROM lineage_heads)`); err != nil {
		return err
	}
	return tx.Commit()
}

// strings runs a query of one text column.
func (c *Cache) strings(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := c.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

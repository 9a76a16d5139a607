package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

// HistorySource is the source of entries indexed from git history: derived
// data (the history is the truth), never written to the memory refs.
const HistorySource = "git:history"

// FileRecord is one file a commit touched (OldPath set for a rename).
type FileRecord struct {
	Path, OldPath string
	Deleted       bool // the commit deleted the file
}

// CommitRecord is an indexed commit.
type CommitRecord struct {
	SHA, Author, Message, Branch string
	Time                         time.Time
	Merge                        bool
	Files                        []FileRecord
}

// PutCommit indexes a commit as a searchable git_commit entry and records
// its files for co-change mining. Indexing the same commit again is a
// no-op; added reports whether it was new.
func (t *Tx) PutCommit(c CommitRecord) (added bool, err error) {
	q, err := t.stmt(`INSERT OR IGNORE INTO commits(sha, time, merge, files) VALUES(?, ?, ?, ?)`)
	if err != nil {
		return false, err
	}
	res, err := q.ExecContext(noCancel, c.SHA, c.Time.Unix(), c.Merge, encodeFiles(c.Files))
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err // already indexed
	}
	names := make([]string, 0, len(c.Files))
	for _, f := range c.Files {
		names = append(names, f.Path)
	}
	content := strings.ToValidUTF8(c.Message, "\uFFFD")
	if len(names) > 0 {
		content += "\n\nFiles: " + strings.ToValidUTF8(strings.Join(names, ", "), "\uFFFD")
	}
	if len(content) > memory.MaxContentBytes {
		content = content[:memory.MaxContentBytes]
	}
	st := memory.State{Entry: memory.Entry{ID: c.SHA, Type: memory.TypeGitCommit, Content: content, Author: strings.ToValidUTF8(c.Author, "\uFFFD"),
		Branch: c.Branch, Tier: memory.DefaultTier(memory.TypeGitCommit)}}
	return true, t.writeRowFresh(st, c.Time.UnixNano(), c.Time.UnixNano(), HistorySource, false, c.SHA, nil, true)
}

// DeleteCommit forgets an indexed commit (e.g. rewritten by a rebase).
func (t *Tx) DeleteCommit(sha string) error {
	if err := t.exec(`DELETE FROM commits WHERE sha=?`, sha); err != nil {
		return err
	}
	return t.DeleteEntry(sha)
}

// HasCommit reports whether sha is indexed.
func (c *Cache) HasCommit(ctx context.Context, sha string) (bool, error) {
	var n int
	err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM commits WHERE sha=?`, sha).Scan(&n)
	return n > 0, err
}

// CommitFiles returns the files of an indexed commit, as History gave
// them; ok is false when sha is not indexed.
func (c *Cache) CommitFiles(ctx context.Context, sha string) (files []FileRecord, ok bool, err error) {
	var blob []byte
	switch err := c.db.QueryRowContext(ctx, `SELECT files FROM commits WHERE sha=?`, sha).Scan(&blob); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("cache: commit files: %w", err)
	}
	return decodeFiles(blob), true, nil
}

// CommitsState identifies what is indexed: the number of indexed commits
// and the row and sha of the last one indexed. It changes whenever commits
// are added or dropped.
func (c *Cache) CommitsState(ctx context.Context) (string, error) {
	var n, last int64
	var sha string
	err := c.db.QueryRowContext(ctx, `SELECT count(*), coalesce(max(rowid), 0), coalesce((SELECT sha FROM commits ORDER BY rowid DESC LIMIT 1), '') FROM commits`).Scan(&n, &last, &sha)
	if err != nil {
		return "", fmt.Errorf("cache: commits: %w", err)
	}
	return fmt.Sprintf("%d %d %s", n, last, sha), nil
}

// CountCommits is the number of indexed non-merge commits (those
// EachCommit gives).
func (c *Cache) CountCommits(ctx context.Context) (int, error) {
	var n int
	if err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM commits WHERE merge = 0`).Scan(&n); err != nil {
		return 0, fmt.Errorf("cache: commits: %w", err)
	}
	return n, nil
}

// EachCommit calls fn for every indexed non-merge commit, oldest first
// (commits of the same second in the order they were indexed, which
// History gives oldest first), with its files.
func (c *Cache) EachCommit(ctx context.Context, fn func(sha string, t time.Time, files []FileRecord)) error {
	return c.eachCommit(ctx, `SELECT sha, time, files FROM commits WHERE merge = 0 ORDER BY time, rowid`, fn)
}

// EachCommitAfter is EachCommit for the commits indexed after the one
// CommitsState named in after, in the order they were indexed; ok is
// false when commits were dropped since, or after names no state.
func (c *Cache) EachCommitAfter(ctx context.Context, after string, fn func(sha string, t time.Time, files []FileRecord)) (ok bool, err error) {
	var n, last int64
	var sha string
	if _, err := fmt.Sscanf(after, "%d %d %s", &n, &last, &sha); err != nil {
		return false, nil
	}
	var kept int64
	var lastSHA string
	err = c.db.QueryRowContext(ctx, `SELECT count(*), coalesce((SELECT sha FROM commits WHERE rowid = ?), '') FROM commits WHERE rowid <= ?`, last, last).Scan(&kept, &lastSHA)
	if err != nil || kept != n || lastSHA != sha {
		return false, err
	}
	return true, c.eachCommit(ctx, `SELECT sha, time, files FROM commits WHERE merge = 0 AND rowid > ? ORDER BY rowid`, fn, last)
}

func (c *Cache) eachCommit(ctx context.Context, query string, fn func(sha string, t time.Time, files []FileRecord), args ...any) error {
	rows, err := c.db.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("cache: commits: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var sha string
		var ts int64
		var blob []byte
		if err := rows.Scan(&sha, &ts, &blob); err != nil {
			return err
		}
		fn(sha, time.Unix(ts, 0).UTC(), decodeFiles(blob))
	}
	return rows.Err()
}

// encodeFiles packs a commit's files into one value: for each file, path,
// old path and "D" for a deleted file, each followed by NUL (paths cannot
// hold NUL).
func encodeFiles(files []FileRecord) []byte {
	b := []byte{} // never NULL: the column is NOT NULL, and INSERT OR IGNORE would drop the commit
	for _, f := range files {
		b = append(b, f.Path...)
		b = append(b, 0)
		b = append(b, f.OldPath...)
		b = append(b, 0)
		if f.Deleted {
			b = append(b, 'D')
		}
		b = append(b, 0)
	}
	return b
}

func decodeFiles(b []byte) []FileRecord {
	parts := strings.Split(string(b), "\x00")
	out := make([]FileRecord, 0, len(parts)/3)
	for i := 0; i+2 < len(parts); i += 3 {
		out = append(out, FileRecord{Path: parts[i], OldPath: parts[i+1], Deleted: parts[i+2] == "D"})
	}
	return out
}

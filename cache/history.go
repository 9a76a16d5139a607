package cache

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/notes"
)

// HistorySource is the source of entries indexed from git history: derived
// data (the history is the truth), never written to the memory refs.
const HistorySource = "git:history"

// FileRecord is one file a commit touched.
type FileRecord struct {
	Path, OldPath  string
	Added, Deleted int
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
	if len(content) > notes.MaxContentBytes {
		content = content[:notes.MaxContentBytes]
	}
	st := notes.State{Entry: notes.Entry{ID: c.SHA, Type: notes.TypeGitCommit, Content: content, Author: strings.ToValidUTF8(c.Author, "\uFFFD"),
		Branch: c.Branch, Tier: notes.DefaultTier(notes.TypeGitCommit)}}
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

// EachCommit calls fn for every indexed non-merge commit, oldest first
// (commits of the same second in the order they were indexed, which
// History gives oldest first), with its files.
func (c *Cache) EachCommit(ctx context.Context, fn func(sha string, t time.Time, files []FileRecord)) error {
	rows, err := c.db.QueryContext(ctx, `SELECT sha, time, files FROM commits WHERE merge = 0 ORDER BY time, rowid`)
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
// old path, added and deleted, each followed by NUL (paths cannot hold NUL).
func encodeFiles(files []FileRecord) []byte {
	var b []byte
	for _, f := range files {
		b = append(b, f.Path...)
		b = append(b, 0)
		b = append(b, f.OldPath...)
		b = append(b, 0)
		b = strconv.AppendInt(b, int64(f.Added), 10)
		b = append(b, 0)
		b = strconv.AppendInt(b, int64(f.Deleted), 10)
		b = append(b, 0)
	}
	return b
}

func decodeFiles(b []byte) []FileRecord {
	parts := strings.Split(string(b), "\x00")
	var out []FileRecord
	for i := 0; i+3 < len(parts); i += 4 {
		a, _ := strconv.Atoi(parts[i+2])
		d, _ := strconv.Atoi(parts[i+3])
		out = append(out, FileRecord{Path: parts[i], OldPath: parts[i+1], Added: a, Deleted: d})
	}
	return out
}

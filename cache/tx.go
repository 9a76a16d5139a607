package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/git-synaptic/git-synaptic/memory"
)

// Tx is one atomic indexing step: entries, ops and notes applied together
// with the ref tips they came from, so a crash leaves either the old or the
// new index, never a mix.
type Tx struct {
	ctx   context.Context
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
	dirty map[string]bool
	// reset is set once the index was emptied in this transaction: rows
	// are then known to be new, and only entries that got ops here have any,
	// which lets a full rebuild skip a lookup and two deletes per entry.
	reset bool
	// indexes are the entries' secondary indexes a reset dropped, to be
	// made again on Commit (CREATE statements).
	indexes []string
	onFold  func(done, total int)
	// withOps holds the entries that got ops in this transaction: after a
	// reset, the others are written as they are put (PutEntry).
	withOps map[string]bool
	// wroteID holds the entries written since the reset.
	wroteID map[string]bool
	// pending holds entries put in this transaction, to fold without re-reading.
	pending map[string]pendingEntry
	// noProblems is set by a reset, which empties the problems, until a
	// problem is recorded: clearing one is then nothing to do.
	noProblems bool
	// floor is, after a reset, a rowid that every row written since is
	// above (afterReset).
	floor int64
	// large is set while the transaction has the larger page cache
	// (largeCache).
	large bool
}

type pendingEntry struct {
	e       memory.Entry
	source  string
	private bool
	doc     []byte
}

// Begin starts a write transaction (taking SQLite's write lock at once).
// The transaction belongs to ctx: Commit refuses once ctx ends, and rolls
// back. database/sql is not given ctx itself: it would watch it with a
// goroutine for every query in the transaction (a tenth of a rebuild's
// time went to starting and waking them).
func (c *Cache) Begin(ctx context.Context) (*Tx, error) {
	tx, err := c.db.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return &Tx{ctx: ctx, tx: tx, stmts: map[string]*sql.Stmt{}, dirty: map[string]bool{}, withOps: map[string]bool{}, wroteID: map[string]bool{}, pending: map[string]pendingEntry{}}, nil
}

// Update runs f in one write transaction (Begin), committing what it
// wrote when it returns nil and abandoning it otherwise.
func (c *Cache) Update(ctx context.Context, f func(*Tx) error) error {
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// noCancel runs single statements: the driver watches a cancellable
// context with a goroutine per statement, which cost more than the
// statements themselves when indexing thousands of rows. The transaction
// as a whole still belongs to the caller's context (Commit).
var noCancel = context.Background()

// stmt returns q prepared once per transaction: indexing runs the same few
// statements thousands of times, and preparing dominated a rebuild.
func (t *Tx) stmt(q string) (*sql.Stmt, error) {
	if st, ok := t.stmts[q]; ok {
		return st, nil
	}
	st, err := t.tx.PrepareContext(t.ctx, q)
	if err != nil {
		return nil, err
	}
	t.stmts[q] = st
	return st, nil
}

func (t *Tx) exec(q string, args ...any) error {
	st, err := t.stmt(q)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(noCancel, args...)
	return err
}

func (t *Tx) queryRow(q string, args ...any) *sql.Row {
	st, err := t.stmt(q)
	if err != nil {
		return t.tx.QueryRowContext(noCancel, q, args...) // reports the same error on Scan
	}
	return st.QueryRowContext(noCancel, args...)
}

// Rollback abandons the transaction.
func (t *Tx) Rollback() {
	t.smallCache()
	t.tx.Rollback()
}

// largeCache gives a transaction that writes most rows (a reset, a
// decay pass over most entries) the page cache of rebuildCacheKiB until
// it ends.
func (t *Tx) largeCache() error {
	if err := t.exec(fmt.Sprintf(`PRAGMA cache_size = -%d`, rebuildCacheKiB)); err != nil {
		return err
	}
	t.large = true
	return nil
}

// smallCache sets the page cache back after largeCache: the connection
// goes back to the pool, and a long-lived process keeps it. Dirty pages
// stay until the transaction ends; SQLite frees the pages over the
// limit as it reads others.
func (t *Tx) smallCache() {
	if t.large {
		_ = t.exec(fmt.Sprintf(`PRAGMA cache_size = -%d`, cacheKiB)) // the transaction's end reports any failure
		t.large = false
	}
}

// Tips returns the indexed ref tips as seen inside the transaction.
func (t *Tx) Tips() (map[string]string, error) { return queryTips(t.ctx, t.tx) }

// SetMeta writes a value to the meta table inside the transaction.
func (t *Tx) SetMeta(key, value string) error {
	return t.exec(`INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value`, key, value)
}

// SetTip records that ref has been indexed up to hash ("" removes it).
func (t *Tx) SetTip(ref, hash string) error {
	var err error
	if hash == "" {
		err = t.exec(`DELETE FROM tips WHERE ref=?`, ref)
	} else {
		err = t.exec(`INSERT INTO tips(ref, hash) VALUES(?, ?) ON CONFLICT(ref) DO UPDATE SET hash=excluded.hash`, ref, hash)
	}
	return err
}

// Reset empties the memory index (keeping meta and indexed history), for a
// full rebuild from the refs.
func (t *Tx) Reset() error {
	// lex_log would name every row twice: its triggers wait for Commit,
	// which logs that everything changed
	var qs []string
	for _, name := range lexTriggerNames {
		qs = append(qs, `DROP TRIGGER IF EXISTS `+name)
	}
	for _, q := range append(qs, `DELETE FROM lex_log`, `INSERT INTO lex_log(row) VALUES(-1)`) {
		if err := t.exec(q); err != nil {
			return err
		}
	}
	for _, q := range []string{
		`DELETE FROM fts WHERE rowid IN (SELECT rowid FROM entries WHERE source != '` + HistorySource + `')`,
		`DELETE FROM entry_tags WHERE entry IN (SELECT rowid FROM entries WHERE source != '` + HistorySource + `')`,
		`DELETE FROM entries WHERE source != '` + HistorySource + `'`,
		`DELETE FROM tips`, `DELETE FROM ops`, `DELETE FROM problems`} {
		if err := t.exec(q); err != nil {
			return err
		}
	}
	// the rows written from here on are new: their insert triggers'
	// work is done for all of them at once on Commit (afterReset)
	if err := t.queryRow(`SELECT coalesce(max(rowid), 0) FROM entries`).Scan(&t.floor); err != nil {
		return err
	}
	for name := range insertTriggers {
		if err := t.exec(`DROP TRIGGER IF EXISTS ` + name); err != nil {
			return err
		}
	}
	if err := t.largeCache(); err != nil {
		return err
	}
	// every entry is due for a decay verdict until a pass gives them
	// (Unjudged)
	if err := t.SetMeta(unjudgedKey, "1"); err != nil {
		return err
	}
	t.reset, t.noProblems = true, true
	return t.dropIndexes()
}

// rebuildCacheKiB is SQLite's page cache while a reset's transaction
// writes every row, where cacheKiB is what other work needs: with less,
// the pages of the entries' id index and the full-text index a rebuild
// keeps changing spill to the WAL and are read back from it (a fifth of
// a rebuild's time at a million entries went to the kernel's copies and
// the WAL's page lookups). Commit and Rollback set it back.
const rebuildCacheKiB = 512 << 10

// afterReset does, for every row written since Reset, what the insert
// triggers it dropped would have done row by row (a tenth of a
// rebuild's SQL at a million entries), and makes them again.
func (t *Tx) afterReset() error {
	for _, q := range []string{
		// a new row waits for its vector (a row has vec_state or is pending)
		`INSERT OR IGNORE INTO vec_pending(rowid) SELECT rowid FROM entries e WHERE rowid > ? AND NOT EXISTS (SELECT 1 FROM vec_state s WHERE s.rowid = e.rowid)`,
		`INSERT INTO decay(rowid, next) SELECT rowid, 0 FROM entries WHERE rowid > ? ON CONFLICT(rowid) DO UPDATE SET next = 0`,
	} {
		if err := t.exec(q, t.floor); err != nil {
			return err
		}
	}
	if err := t.exec(bumpEntriesGen); err != nil {
		return err
	}
	for _, ddl := range insertTriggers {
		if err := t.exec(ddl); err != nil {
			return err
		}
	}
	return nil
}

// dropIndexes drops the entries' secondary indexes until Commit makes
// them again: a rebuild writes every row, and an index made once over
// all of them costs less than one kept up row by row (at a million
// entries, inserting into entries was 69 of a reindex's 217 s).
func (t *Tx) dropIndexes() error {
	if t.indexes != nil {
		return nil
	}
	rows, err := t.tx.QueryContext(noCancel, `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'entries' AND sql IS NOT NULL`)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			rows.Close()
			return err
		}
		names, t.indexes = append(names, name), append(t.indexes, ddl)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, name := range names {
		if err := t.exec(`DROP INDEX "` + strings.ReplaceAll(name, `"`, `""`) + `"`); err != nil {
			return err
		}
	}
	return nil
}

// PutEntry indexes entry e found in ref source.
// The row is written on Commit, once its operations are folded in; in a
// rebuild, an entry with no operations indexed yet is written at once
// (operations read later fold it again on Commit): holding every entry
// until Commit took gigabytes at a million entries.
func (t *Tx) PutEntry(e memory.Entry, source string, private bool, doc []byte) error {
	if t.reset && !t.withOps[e.ID] {
		delete(t.pending, e.ID)
		delete(t.dirty, e.ID)
		return t.writeRow(memory.Fold(e, nil), e.Created.UnixNano(), e.Created.UnixNano(), source, private, "", doc)
	}
	t.pending[e.ID] = pendingEntry{e: e, source: source, private: private, doc: doc}
	t.dirty[e.ID] = true
	return nil
}

// PutOp indexes op o; its entry is re-folded on Commit.
func (t *Tx) PutOp(o memory.Op, doc []byte) error {
	if err := t.exec(`INSERT INTO ops(id, entry, doc) VALUES(?, ?, ?) ON CONFLICT(id) DO NOTHING`, o.ID, o.Entry, doc); err != nil {
		return err
	}
	t.dirty[o.Entry] = true
	t.withOps[o.Entry] = true
	return nil
}

// DeleteEntry drops an entry (its file left the ref, e.g. after a purge).
func (t *Tx) DeleteEntry(id string) error {
	var rowid int64
	err := t.queryRow(`SELECT rowid FROM entries WHERE id=?`, id).Scan(&rowid)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	delete(t.dirty, id)
	delete(t.pending, id)
	if t.reset && rowid <= t.floor {
		t.floor = rowid - 1 // a row written after this one may take its rowid
	}
	for _, q := range []string{`DELETE FROM entries WHERE rowid=?`, `DELETE FROM entry_tags WHERE entry=?`, `DELETE FROM fts WHERE rowid=?`} {
		if err := t.exec(q, rowid); err != nil {
			return err
		}
	}
	return nil
}

// DeleteOp drops an op; its entry is re-folded.
func (t *Tx) DeleteOp(id string) error {
	var entry string
	err := t.queryRow(`SELECT entry FROM ops WHERE id=?`, id).Scan(&entry)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	t.dirty[entry] = true
	err = t.exec(`DELETE FROM ops WHERE id=?`, id)
	return err
}

// PutNote indexes the synaptic note of commit sha as a searchable entry.
func (t *Tx) PutNote(sha, text, author string, created int64) error {
	st := memory.State{Entry: memory.Entry{ID: memory.NoteID(sha), Type: memory.TypeNote, Content: text, Author: author, Tier: memory.TierLongterm}}
	return t.writeRow(st, created, created, memory.NotesSource, false, sha, nil)
}

// Problem records an object that could not be indexed.
func (t *Tx) Problem(source, path, object, msg string) error {
	t.noProblems = false
	err := t.exec(`INSERT INTO problems(source, path, object, message) VALUES(?, ?, ?, ?)
		ON CONFLICT(source, path) DO UPDATE SET object=excluded.object, message=excluded.message`, source, path, object, msg)
	return err
}

// ClearProblem forgets a problem at path (the object was fixed or removed).
func (t *Tx) ClearProblem(source, path string) error {
	if t.noProblems {
		return nil
	}
	err := t.exec(`DELETE FROM problems WHERE source=? AND path=?`, source, path)
	return err
}

// ClearProblems forgets every problem recorded for source.
func (t *Tx) ClearProblems(source string) error {
	err := t.exec(`DELETE FROM problems WHERE source=?`, source)
	return err
}

// Rebuilding reports whether the index was emptied in this transaction:
// entries are then written as they are put, and Commit folds only those
// with operations.
func (t *Tx) Rebuilding() bool { return t.reset }

// OnFold, if set, is told how far Commit's re-folding has got.
func (t *Tx) OnFold(f func(done, total int)) { t.onFold = f }

// Commit re-folds every entry touched by this transaction and commits.
func (t *Tx) Commit() error {
	ids := make([]string, 0, len(t.dirty))
	for id := range t.dirty {
		ids = append(ids, id)
	}
	sort.Strings(ids) // a stable row order, so equal scores rank the same way each rebuild
	for n, id := range ids {
		if n%1000 == 0 {
			if err := t.ctx.Err(); err != nil {
				t.Rollback()
				return fmt.Errorf("cache: %w", err)
			}
			if t.onFold != nil {
				t.onFold(n, len(t.dirty))
			}
		}
		if err := t.refold(id); err != nil {
			t.Rollback()
			return fmt.Errorf("cache: fold %s: %w", id, err)
		}
	}
	if t.onFold != nil {
		t.onFold(len(t.dirty), len(t.dirty))
	}
	for _, ddl := range t.indexes {
		if err := t.exec(ddl); err != nil {
			t.Rollback()
			return fmt.Errorf("cache: make an index again: %w", err)
		}
	}
	if t.reset {
		if _, err := t.tx.ExecContext(noCancel, lexTriggers); err != nil { // several statements
			t.Rollback()
			return fmt.Errorf("cache: make lex_log's triggers again: %w", err)
		}
		if err := t.afterReset(); err != nil {
			t.Rollback()
			return fmt.Errorf("cache: after a rebuild: %w", err)
		}
	}
	// a lexicon that read less than the last lexLogKeep changes reads
	// everything again
	if err := t.exec(`DELETE FROM lex_log WHERE seq <= (SELECT max(seq) FROM lex_log) - ?`, lexLogKeep); err != nil {
		t.Rollback()
		return fmt.Errorf("cache: trim lex_log: %w", err)
	}
	if err := t.ctx.Err(); err != nil {
		t.Rollback()
		return fmt.Errorf("cache: %w", err)
	}
	t.smallCache()
	if err := t.tx.Commit(); err != nil {
		return fmt.Errorf("cache: commit: %w", err)
	}
	return nil
}

func (t *Tx) refold(id string) error {
	p, ok := t.pending[id]
	if !ok {
		err := t.queryRow(`SELECT doc, source, private FROM entries WHERE id=?`, id).Scan(&p.doc, &p.source, &p.private)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // ops whose entry has not arrived (yet)
		}
		if err != nil {
			return err
		}
		if p.e, err = memory.DecodeEntry(p.doc, id); err != nil {
			return err
		}
	}
	var ops []memory.Op
	q, err := t.stmt(`SELECT doc FROM ops WHERE entry=?`)
	if err != nil {
		return err
	}
	rows, err := q.QueryContext(noCancel, id)
	if err != nil {
		return err
	}
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			rows.Close()
			return err
		}
		o, err := memory.DecodeOp(doc, "")
		if err != nil {
			continue // validated when indexed; unreadable ops never reach here
		}
		ops = append(ops, o)
	}
	rows.Close()
	st := memory.Fold(p.e, ops)
	return t.writeRow(st, st.Created.UnixNano(), st.Updated.UnixNano(), p.source, p.private, "", p.doc)
}

func (t *Tx) writeRow(st memory.State, created, updated int64, source string, private bool, commit string, doc []byte) error {
	return t.writeRowFresh(st, created, updated, source, private, commit, doc, false)
}

const entryCols = `id, source, private, type, content, tags, project, branch, session_id, agent_id, author,
			created, updated, tier, tier_explicit, pinned, archived, related, commit_sha, edits, doc, relevance, irrelevant, anchor, verified, files`

// writeRowFresh writes an entry row with its tags and full-text row. fresh
// says the caller knows the row is new, which skips the upsert and the
// deletes of old tag and text rows.
func (t *Tx) writeRowFresh(st memory.State, created, updated int64, source string, private bool, commit string, doc []byte, fresh bool) error {
	related := strings.Join(st.RelatedIDs, " ")
	tags := strings.Join(st.Tags, " ")
	args := []any{st.ID, source, private, st.Type, st.Content, tags, st.Project, st.Branch, st.SessionID, st.AgentID, st.Author,
		created, updated, st.Tier, st.TierExplicit, st.Pinned, st.Archived, related, commit, st.Edits, doc, st.Relevance, st.Irrelevant,
		st.Anchor, st.Verified, encodeEntryFiles(st.Files)}
	var rowid int64
	// After a reset, an entry not written yet in this transaction is new
	// but for a clash with a commit's row: tried as a plain insert, which
	// runs no query (database/sql starts a goroutine for every query in a
	// transaction), and on a clash written as an upsert as before.
	tryFresh := !fresh && t.reset && !t.wroteID[st.ID]
	if fresh || tryFresh {
		q, err := t.stmt(`INSERT INTO entries(` + entryCols + `) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		res, err := q.ExecContext(noCancel, args...)
		if err == nil {
			rowid, err = res.LastInsertId()
		}
		if err == nil {
			fresh = true
		} else if !tryFresh || !isConstraint(err) {
			return err
		}
	}
	if !fresh {
		err := t.queryRow(`INSERT INTO entries(`+entryCols+`)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET source=excluded.source, private=excluded.private, type=excluded.type, content=excluded.content,
			tags=excluded.tags, project=excluded.project, branch=excluded.branch, session_id=excluded.session_id, agent_id=excluded.agent_id,
			author=excluded.author, created=excluded.created, updated=excluded.updated, tier=excluded.tier, tier_explicit=excluded.tier_explicit,
			pinned=excluded.pinned, archived=excluded.archived, related=excluded.related, commit_sha=excluded.commit_sha, edits=excluded.edits,
			doc=excluded.doc, relevance=excluded.relevance, irrelevant=excluded.irrelevant, anchor=excluded.anchor, verified=excluded.verified,
			files=excluded.files, auto_tier='', auto_archived=0
		RETURNING rowid`, args...).Scan(&rowid)
		if err != nil {
			return err
		}
	}
	if !fresh { // the row may have been there: its old tags and text go
		for _, q := range []string{`DELETE FROM entry_tags WHERE entry=?`, `DELETE FROM fts WHERE rowid=?`} {
			if err := t.exec(q, rowid); err != nil {
				return err
			}
		}
	}
	if t.reset {
		t.wroteID[st.ID] = true
	}
	for _, tag := range st.Tags {
		if err := t.exec(`INSERT OR IGNORE INTO entry_tags(tag, entry) VALUES(?, ?)`, tag, rowid); err != nil {
			return err
		}
	}
	return t.exec(`INSERT INTO fts(rowid, content, tags) VALUES(?, ?, ?)`, rowid, st.Content, tags)
}

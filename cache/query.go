package cache

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

// Filter narrows List and Search. Zero values mean "any".
type Filter struct {
	Types           []memory.Type
	Tags            []string // all must be present
	Tier            memory.Tier
	Since, Until    time.Time
	Author          string // case-insensitive substring of "Name <email>"
	Project         string
	Branch          string
	Session         string
	IncludeArchived bool
	OnlyArchived    bool
	Limit           int
	// LeaveOut are anchors whose entries are left out (another branch's
	// unmerged work, with --this-branch).
	LeaveOut []string
}

// Row is an indexed entry in its current (folded) state. It is storage:
// the application returns its own types.
type Row struct {
	memory.State
	Source  string
	Private bool
	Commit  string // for notes: the annotated commit
	// Decayed is set when maintenance archived the entry (not a person).
	Decayed bool
}

// effTier and effArchived are an entry's tier and archived state once
// maintenance (derived, local) has had its say; authored operations reset
// maintenance's verdict on the entries they touch.
const (
	effTier     = `CASE WHEN e.auto_tier != '' THEN e.auto_tier ELSE e.tier END`
	effArchived = `(e.archived OR e.auto_archived)`
)

const rowCols = `e.id, e.source, e.private, e.type, e.content, e.tags, e.project, e.branch, e.session_id, e.agent_id, e.author,
	e.created, e.updated, ` + effTier + `, e.tier_explicit, e.pinned, ` + effArchived + `, e.related, e.commit_sha, e.edits, e.auto_archived,
	e.relevance, e.irrelevant, e.anchor, e.verified, e.files`

func scanRow(sc interface{ Scan(...any) error }, extra ...any) (Row, error) {
	var r Row
	var tags, related, files string
	var created, updated int64
	dest := []any{&r.ID, &r.Source, &r.Private, &r.Type, &r.Content, &tags, &r.Project, &r.Branch, &r.SessionID, &r.AgentID, &r.Author,
		&created, &updated, &r.Tier, &r.TierExplicit, &r.Pinned, &r.Archived, &related, &r.Commit, &r.Edits, &r.Decayed,
		&r.Relevance, &r.Irrelevant, &r.Anchor, &r.Verified, &files}
	if err := sc.Scan(append(dest, extra...)...); err != nil {
		return r, err
	}
	r.V = memory.FormatVersion
	r.Tags = strings.Fields(tags)
	r.RelatedIDs = strings.Fields(related)
	r.Files = decodeEntryFiles(files)
	r.Created = time.Unix(0, created).UTC()
	r.Updated = time.Unix(0, updated).UTC()
	return r, nil
}

func (f Filter) where() (string, []any) { return f.conditions("NOT " + effArchived) }

// admitting is where with entries not archived spelled as liveIndex's
// condition, so that a query of only the rows f admits reads that index
// alone.
func (f Filter) admitting() (string, []any) { return f.conditions(liveOnly) }

// conditions is where, with live the condition for entries not archived.
func (f Filter) conditions(live string) (string, []any) {
	var conds []string
	var args []any
	switch {
	case f.OnlyArchived:
		conds = append(conds, effArchived)
	case !f.IncludeArchived:
		conds = append(conds, live)
	}
	if len(f.Types) > 0 {
		conds = append(conds, "e.type IN ("+placeholders(len(f.Types))+")")
		args = append(args, typeArgs(f.Types)...)
	}
	for _, tag := range f.Tags {
		// an IN list the query can start from: with EXISTS, SQLite read
		// every entry newest first looking for a rare tag (320 ms at 300k)
		conds = append(conds, "e.rowid IN (SELECT entry FROM entry_tags WHERE tag=?)")
		args = append(args, strings.ToLower(tag))
	}
	if f.Tier != "" {
		conds = append(conds, effTier+"=?")
		args = append(args, string(f.Tier))
	}
	if !f.Since.IsZero() {
		conds = append(conds, "e.created>=?")
		args = append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		conds = append(conds, "e.created<=?")
		args = append(args, f.Until.UnixNano())
	}
	if f.Author != "" {
		conds = append(conds, "instr(lower(e.author), ?) > 0")
		args = append(args, strings.ToLower(f.Author))
	}
	for _, kv := range []struct{ col, v string }{{"project", f.Project}, {"branch", f.Branch}, {"session_id", f.Session}} {
		if kv.v != "" {
			conds = append(conds, "e."+kv.col+"=?")
			args = append(args, kv.v)
		}
	}
	if len(f.LeaveOut) > 0 {
		b, _ := json.Marshal(f.LeaveOut)
		conds = append(conds, "e.anchor NOT IN (SELECT value FROM json_each(?))")
		args = append(args, string(b))
	}
	if len(conds) == 0 {
		return "1", nil
	}
	return strings.Join(conds, " AND "), args
}

// anyOf reports whether an entry of one of types exists (true for no
// types: any type).
func (c *Cache) anyOf(ctx context.Context, types []memory.Type) (bool, error) {
	if len(types) == 0 {
		return true, nil
	}
	var some bool
	err := c.db.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM entries WHERE type IN (`+placeholders(len(types))+`))`, typeArgs(types)...).Scan(&some)
	return some, err
}

// typeArgs is types as SQL parameters.
func typeArgs(types []memory.Type) []any {
	out := make([]any, len(types))
	for i, t := range types {
		out[i] = string(t)
	}
	return out
}

// placeholders is n comma-separated SQL parameters.
func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

func (f Filter) limit() int {
	if f.Limit <= 0 {
		return -1
	}
	return f.Limit
}

// List returns matching entries, newest first. Indexed commits are listed
// only when asked for by type.
func (c *Cache) List(ctx context.Context, f Filter) ([]Row, error) {
	q, args := listQuery(f, rowCols)
	return c.queryRows(ctx, "list", q, args...)
}

// listQuery is List's query, selecting cols.
func listQuery(f Filter, cols string) (string, []any) {
	if len(f.Types) > 1 && f.Limit > 0 {
		ids, args := newest("entries e", f, f.Limit, 0)
		return `SELECT ` + cols + ` FROM entries e WHERE e.rowid IN (` + ids + `) ORDER BY e.created DESC, e.id`, args
	}
	w, args := f.where()
	if len(f.Types) == 0 {
		w += " AND e.type != '" + string(memory.TypeGitCommit) + "'"
	}
	return `SELECT ` + cols + ` FROM entries e WHERE ` + w + ` ORDER BY e.created DESC, e.id LIMIT ?`, append(args, f.limit())
}

// Brief is what a caller needs to choose among List's rows, without
// their text: the rows it chooses are then read whole (RowsOf).
type Brief struct {
	ID         string
	Type       memory.Type
	SessionID  string
	Private    bool
	Tags       []string
	Irrelevant bool
	rowid      int64
}

// ListBriefs is List with the rows' briefs: reading every row whole to
// keep a few (a prompt's last day: 30 read for 5 kept) cost most of it.
// A window (f.Since) is read newest first, every type in one pass, until
// f.Limit briefs are found, so its cost follows the window's rows, not
// memory's size: List's query of each type apart, made for memory's
// newest without a window, took 0.35 ms for a prompt's last day at 10k
// entries in process (about 1.2 ms served by the warm process), this one
// 0.07 ms.
func (c *Cache) ListBriefs(ctx context.Context, f Filter) ([]Brief, error) {
	const cols = `e.id, e.type, e.session_id, e.private, e.tags, e.irrelevant, e.rowid`
	var q string
	var args []any
	if !f.Since.IsZero() && f.Limit > 0 {
		w, wargs := f.where()
		q, args = `SELECT `+cols+` FROM entries e INDEXED BY entries_created WHERE `+w+` ORDER BY e.created DESC, e.id LIMIT ?`, append(wargs, f.Limit)
	} else {
		q, args = listQuery(f, cols)
	}
	rows, err := c.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("cache: list: %w", err)
	}
	defer rows.Close()
	var out []Brief
	for rows.Next() {
		var b Brief
		var tags string
		if err := rows.Scan(&b.ID, &b.Type, &b.SessionID, &b.Private, &tags, &b.Irrelevant, &b.rowid); err != nil {
			return nil, fmt.Errorf("cache: list: %w", err)
		}
		b.Tags = strings.Fields(tags)
		out = append(out, b)
	}
	return out, rows.Err()
}

// RowsOf returns the rows of briefs, in their order; a row gone since
// (a write in between) is left out.
func (c *Cache) RowsOf(ctx context.Context, briefs []Brief) ([]Row, error) {
	if len(briefs) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(briefs))
	for i, b := range briefs {
		ids[i] = b.rowid
	}
	byRow, err := c.rowsByRowid(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Row, 0, len(briefs))
	for _, b := range briefs {
		if r, ok := byRow[b.rowid]; ok && r.ID == b.ID {
			out = append(out, r)
		}
	}
	return out, nil
}

// newest is a query for the rowids of the entries f admits in from (which
// names them e), newest first, n of them after the first off. With several
// types it takes the newest of each type, walked in entries_type's order,
// and merges them: given the types at once, SQLite read every entry of all
// of them and sorted those (220 ms for the newest 500 of three types at
// 300k entries).
func newest(from string, f Filter, n, off int) (string, []any) {
	if len(f.Types) < 2 || n < 0 {
		w, args := f.where()
		return `SELECT e.rowid AS id FROM ` + from + ` WHERE ` + w + ` ORDER BY e.created DESC, e.id LIMIT ? OFFSET ?`, append(args, n, off)
	}
	var parts []string
	var args []any
	for _, t := range f.Types {
		one := f
		one.Types = []memory.Type{t}
		w, a := one.where()
		parts = append(parts, `SELECT * FROM (SELECT e.rowid AS id, e.created AS created, e.id AS eid FROM `+from+` WHERE `+w+` ORDER BY e.created DESC, e.id LIMIT ?)`)
		args = append(append(args, a...), n+off)
	}
	return `SELECT id FROM (` + strings.Join(parts, " UNION ALL ") + `) ORDER BY created DESC, eid LIMIT ? OFFSET ?`, append(args, n, off)
}

// Backlinks lists the entries whose related ids hold id, newest first,
// archived ones included.
func (c *Cache) Backlinks(ctx context.Context, id string) ([]Row, error) {
	q := `SELECT ` + rowCols + ` FROM entries e WHERE instr(' ' || e.related || ' ', ' ' || ? || ' ') > 0 ORDER BY e.created DESC, e.id`
	return c.queryRows(ctx, "backlinks", q, id)
}

// queryRows runs a query selecting rowCols and scans the rows.
func (c *Cache) queryRows(ctx context.Context, what, q string, args ...any) ([]Row, error) {
	rows, err := c.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("cache: %s: %w", what, err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ErrNotFound is returned when no entry matches an id or prefix.
var ErrNotFound = errors.New("no such memory entry")

// ErrAmbiguous is returned when an id prefix matches several entries.
var ErrAmbiguous = errors.New("ambiguous id prefix")

var hexRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{4,40}$`) })

// Resolve expands an id prefix (at least 4 hex digits) to one full id.
func (c *Cache) Resolve(ctx context.Context, prefix string) (string, error) {
	p := strings.ToLower(prefix)
	if !hexRE().MatchString(p) {
		return "", fmt.Errorf("%w: %q (ids are hex; give at least 4 digits)", ErrNotFound, prefix)
	}
	rows, err := c.db.QueryContext(ctx, `SELECT id FROM entries WHERE id >= ? AND id < ? LIMIT 6`, p, p+"g")
	if err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return "", err
		}
		ids = append(ids, id)
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("%w: %s", ErrNotFound, prefix)
	case 1:
		return ids[0], rows.Err()
	}
	for _, id := range ids {
		if id == p {
			return id, nil
		}
	}
	return "", fmt.Errorf("%w: %s matches %s", ErrAmbiguous, prefix, strings.Join(ids, ", "))
}

// Get returns one entry by full id.
func (c *Cache) Get(ctx context.Context, id string) (Row, error) {
	r, err := scanRow(c.db.QueryRowContext(ctx, `SELECT `+rowCols+` FROM entries e WHERE e.id=?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return r, err
}

// Ops returns the operations recorded on an entry, in fold order.
// Original is entry id as it was first saved, before any operation.
func (c *Cache) Original(ctx context.Context, id string) (memory.Entry, error) {
	var doc []byte
	err := c.db.QueryRowContext(ctx, `SELECT doc FROM entries WHERE id=?`, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return memory.Entry{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return memory.Entry{}, err
	}
	if len(doc) == 0 { // notes and commits are not documents
		r, err := c.Get(ctx, id)
		return r.Entry, err
	}
	return memory.DecodeEntry(doc, id)
}

func (c *Cache) Ops(ctx context.Context, entry string) ([]memory.Op, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT doc FROM ops WHERE entry=?`, entry)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ops []memory.Op
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, err
		}
		if o, err := memory.DecodeOp(doc, ""); err == nil {
			ops = append(ops, o)
		}
	}
	memory.SortOps(ops)
	return ops, rows.Err()
}

// Stats are counts over the memory index (indexed commits apart).
type Stats struct {
	Total    int            `json:"total"`
	Commits  int            `json:"indexed_commits"`
	Archived int            `json:"archived"`
	Pinned   int            `json:"pinned"`
	Private  int            `json:"private"`
	ByType   map[string]int `json:"by_type"`
	ByTier   map[string]int `json:"by_tier"`
}

// Stats counts entries by type and tier (archived ones counted apart).
func (c *Cache) Stats(ctx context.Context) (Stats, error) {
	s := Stats{ByType: map[string]int{}, ByTier: map[string]int{}}
	// read in the table's order: SQLite took the type index for the
	// grouping, then each row from the table in no order (6.9 s against
	// 3 s at a million entries)
	rows, err := c.db.QueryContext(ctx, `SELECT e.type, `+effTier+`, `+effArchived+`, e.pinned, e.private, count(*) FROM entries e NOT INDEXED GROUP BY 1, 2, 3, 4, 5`)
	if err != nil {
		return s, fmt.Errorf("cache: stats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var typ, tier string
		var archived, pinned, private bool
		var n int
		if err := rows.Scan(&typ, &tier, &archived, &pinned, &private, &n); err != nil {
			return s, err
		}
		if typ == string(memory.TypeGitCommit) {
			s.Commits += n
			continue
		}
		s.Total += n
		if private {
			s.Private += n
		}
		if archived {
			s.Archived += n
			continue
		}
		if pinned {
			s.Pinned += n
		}
		s.ByType[typ] += n
		s.ByTier[tier] += n
	}
	return s, rows.Err()
}

// Count is the number of entries, archived ones included, commits not:
// Stats' Total, read from the type index alone (a sync counts before and
// after; Stats reads every row, about half a second at 300k entries).
func (c *Cache) Count(ctx context.Context) (int, error) {
	var n int
	err := c.db.QueryRowContext(ctx, `SELECT coalesce(sum(n), 0) FROM (SELECT type, count(*) AS n FROM entries GROUP BY type) WHERE type != ?`, string(memory.TypeGitCommit)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("cache: count: %w", err)
	}
	return n, nil
}

// Doc is a memory document the cache holds, at its path in a memory tree.
type Doc struct {
	Path string
	Data []byte
}

// Documents returns the entry and operation documents indexed from ref,
// byte for byte as they were read: what repair writes back when git lost
// the objects.
func (c *Cache) Documents(ctx context.Context, ref string) ([]Doc, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT id, doc, 0 FROM entries WHERE source=? AND length(doc)>0
		UNION ALL SELECT o.id, o.doc, 1 FROM ops o JOIN entries e ON e.id=o.entry WHERE e.source=?`, ref, ref)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Doc
	for rows.Next() {
		var id string
		var doc []byte
		var op bool
		if err := rows.Scan(&id, &doc, &op); err != nil {
			return nil, err
		}
		if !memory.ValidID(id) {
			continue
		}
		p := memory.EntryPath(id)
		if op {
			p = memory.OpPath(id)
		}
		out = append(out, Doc{Path: p, Data: doc})
	}
	return out, rows.Err()
}

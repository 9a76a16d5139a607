package cache

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// A search's vector lanes score a few hundred of the rows nearest by
// their sign bits, in that order, leaving out those the filter rejects
// and those without a float vector (coarse). Asked of SQL, that is a
// descent in the entries and in vec_state for each: 1.5 ms of a warm
// prompt hook's 8 at 10k entries, after the query's embedding, where
// nothing runs beside it. A cache that holds vectors (a long-lived
// process) keeps instead, for a handful of filters, the set of rows each
// admits, and which vector (by text hash, heldVectors) each row has, and
// follows lex_log to keep them current: every change of an entry is
// logged there, its text's (kind 0) and its other columns' (kind 1).
// What it keeps is what SQL would answer at the log's position, so a
// search scores the same rows either way, with the same vectors.
//
// It also keeps the rows it read whole lately (a prompt reads about 90:
// its BM25 lane's 50, its vector lane's 20, its last day's; and those of
// its BM25 lane's 200 best matches it did not hold), and the BM25 lane
// finds which of those 200 the filter admits, and their order, from the
// held set and those rows: read from SQL, the two
// were 1 ms of a warm prompt's 4 in process at 10k entries, before and
// after the query's embedding.

// heldRows is what a cache that holds vectors keeps of its rows.
type heldRows struct {
	seq        int64 // the last lex_log row applied; -1 when not read yet
	sets       map[string]*heldSet
	whole      map[int64]Row // rows read whole lately, by rowid
	wholeBytes int           // about what they take (rowBytes)
}

// heldWholeMax is about how many bytes of rows read whole a cache keeps:
// 8 MiB, some 16,000 rows of 500 bytes, a hundred of the largest (64
// KiB).
const heldWholeMax = 8 << 20

// heldSet is the set of rows a filter (w, args: Filter.admitting)
// admits, a bitset by rowid.
type heldSet struct {
	w    string
	args []any
	bits []uint64
}

// heldSetsMax is how many filters' sets a cache keeps: a handful of
// filters in turn (a prompt's memory, a search's memory and commits),
// never many.
const heldSetsMax = 8

// heldAdmits returns the rows the filter (w, args) admits, current with
// the table, in a cache that holds vectors, reading the set when it holds
// none yet; nil otherwise.
func (c *Cache) heldAdmits(ctx context.Context, w string, args []any) ([]uint64, error) {
	bits, ok, err := c.heldSet(ctx, w, args)
	if err != nil || ok || c.rows == nil {
		return bits, err
	}
	if bits, err = readAdmitted(ctx, c.db, w, args); err != nil {
		return nil, err
	}
	if len(c.rows.sets) >= heldSetsMax {
		clear(c.rows.sets)
	}
	c.rows.sets[admitKey(w, args)] = &heldSet{w: w, args: args, bits: bits}
	return bits, nil
}

// heldSet returns the rows the filter (w, args) admits, current with the
// table, and true, if the cache holds that set; false otherwise.
func (c *Cache) heldSet(ctx context.Context, w string, args []any) ([]uint64, bool, error) {
	r := c.rows // set with c.held (HoldVectors)
	if r == nil {
		return nil, false, nil
	}
	if err := c.followRows(ctx); err != nil {
		return nil, false, err
	}
	s := r.sets[admitKey(w, args)]
	if s == nil {
		return nil, false, nil
	}
	return s.bits, true, nil
}

// followRows brings the held rows up to the table: the rows lex_log
// names after r.seq are admitted again by each set, and their vectors
// looked up again. A log cut short past r.seq (Tx.Commit trims it), a
// reset, or more changes than reading afresh costs, make it start over.
func (c *Cache) followRows(ctx context.Context) error {
	r := c.rows
	if r.seq >= 0 {
		changed, last, ok, err := logSince(ctx, c.db, r.seq, false, followMax)
		if err != nil {
			return fmt.Errorf("cache: held rows: %w", err)
		}
		if ok {
			if err := c.applyChanged(ctx, changed); err != nil {
				return err
			}
			r.seq = last
			return nil
		}
	}
	// start over: from the log's end as it is now, before any set is
	// read again, so that a change made meanwhile is applied again later
	if err := c.db.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM lex_log`).Scan(&r.seq); err != nil {
		return fmt.Errorf("cache: held rows: %w", err)
	}
	r.sets = map[string]*heldSet{}
	clear(r.whole)
	r.wholeBytes = 0
	if c.held.keyOf != nil {
		clear(c.held.keyOf)
	}
	return nil
}

// followMax is the most changed rows followRows applies one by one; past
// it, reading the sets again costs less.
const followMax = 4096

// logSince returns the rows lex_log names after seq (only those whose
// text changed, kind 0, when textOnly), once each, and the last position
// read; ok is false when the log does not follow on from seq (cut short,
// or reset) or names more than most rows. The lexicon and the held rows
// both follow the table through it.
func logSince(ctx context.Context, db *sql.DB, seq int64, textOnly bool, most int) (changed []int64, last int64, ok bool, err error) {
	rows, err := db.QueryContext(ctx, `SELECT seq, row, kind FROM lex_log WHERE seq > ? ORDER BY seq`, seq)
	if err != nil {
		return nil, 0, false, err
	}
	defer rows.Close()
	seen := map[int64]bool{}
	last = seq
	for rows.Next() {
		var s, row, kind int64
		if err := rows.Scan(&s, &row, &kind); err != nil {
			return nil, 0, false, err
		}
		if s != last+1 || row < 0 {
			return nil, 0, false, nil
		}
		last = s
		if (kind == 0 || !textOnly) && !seen[row] {
			seen[row] = true
			if changed = append(changed, row); len(changed) > most {
				return nil, 0, false, nil
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, false, err
	}
	return changed, last, true, nil
}

// applyChanged admits the changed rows again in each held set and
// forgets which vectors they had.
func (c *Cache) applyChanged(ctx context.Context, changed []int64) error {
	if len(changed) == 0 {
		return nil
	}
	for _, row := range changed {
		delete(c.held.keyOf, row)
		c.rows.forget(row)
	}
	idJSON, _ := json.Marshal(changed)
	for _, s := range c.rows.sets {
		for _, row := range changed {
			if has(s.bits, row) {
				s.bits[row/64] &^= 1 << (row % 64)
			}
		}
		admitted, err := c.rowidsWhere(ctx, string(idJSON), s.w, s.args)
		if err != nil {
			return err
		}
		for _, row := range admitted {
			for int(row/64) >= len(s.bits) {
				s.bits = append(s.bits, 0)
			}
			s.bits[row/64] |= 1 << (row % 64)
		}
	}
	return nil
}

// rowidsWhere returns the rows among idJSON (a JSON list of rowids) that
// where admits.
func (c *Cache) rowidsWhere(ctx context.Context, idJSON, w string, args []any) ([]int64, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT e.rowid FROM json_each(?) j CROSS JOIN entries e ON e.rowid = j.value WHERE `+w,
		append([]any{idJSON}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("cache: held rows: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("cache: held rows: %w", err)
		}
		if id >= 0 {
			out = append(out, id)
		}
	}
	return out, rows.Err()
}

// heldInOrder is scoreInOrder for a cache that holds vectors, with the
// rows the filter admits (admit): the first k rows of ranked in admit that
// have a float vector, scored, with SQL asked only for the vectors of rows
// it does not know yet.
func (c *Cache) heldInOrder(ctx context.Context, q []float32, ranked []int64, k int, admit []uint64) ([]scoredRow, error) {
	h := c.holding()
	var out []scoredRow
	for i := 0; i < len(ranked) && len(out) < k; {
		var batch []int64
		for ; i < len(ranked) && len(batch) < k-len(out); i++ {
			if has(admit, ranked[i]) {
				batch = append(batch, ranked[i])
			}
		}
		vecs, err := c.rowVectors(ctx, h, batch)
		if err != nil {
			return nil, err
		}
		for _, row := range batch {
			if v, ok := vecs[row]; ok {
				out = append(out, scoredRow{row, dot(q, v)})
			}
		}
	}
	return out, nil
}

// rowVectors returns the float vectors of those of rows that have one:
// from h, or from the store for the rows h does not know.
func (c *Cache) rowVectors(ctx context.Context, h *heldVectors, rows []int64) (map[int64][]float32, error) {
	out := make(map[int64][]float32, len(rows))
	var unknown []int64
	for _, row := range rows {
		if v, ok := h.byKey[h.keyOf[row]]; ok {
			out[row] = v
			continue
		}
		unknown = append(unknown, row)
	}
	if len(unknown) == 0 {
		return out, nil
	}
	idJSON, _ := json.Marshal(unknown)
	// vec_state alone, not entries: a row of it is a row of entries
	// (entries' triggers delete it), and reading 200 rows of entries at
	// a million took several milliseconds of a search's vector lane
	found, err := c.heldVectorsOf(ctx, h, `SELECT s.rowid, '', s.hash FROM json_each(?) j CROSS JOIN vec_state s ON s.rowid = j.value`, string(idJSON))
	if err != nil {
		return nil, err
	}
	if len(h.keyOf) > 2*len(h.byKey)+followMax {
		clear(h.keyOf) // rows whose vectors h let go of
	}
	for _, f := range found {
		out[f.rowid] = f.vec
		h.keyOf[f.rowid] = f.key
	}
	return out, nil
}

// heldWhole returns the rows among ids the cache holds whole, current
// with the table, and the ids it does not hold; all of ids in a cache
// that holds none.
func (c *Cache) heldWhole(ctx context.Context, ids []int64) (map[int64]Row, []int64, error) {
	out := make(map[int64]Row, len(ids))
	r := c.rows
	if r == nil {
		return out, ids, nil
	}
	if err := c.followRows(ctx); err != nil {
		return nil, nil, err
	}
	var unknown []int64
	for _, id := range ids {
		if row, ok := r.whole[id]; ok {
			out[id] = row.clone()
		} else {
			unknown = append(unknown, id)
		}
	}
	return out, unknown, nil
}

// heldRow returns the row with rowid id if the cache holds it whole, as
// it holds it (not to be changed).
func (c *Cache) heldRow(id int64) (Row, bool) {
	if c.rows == nil {
		return Row{}, false
	}
	row, ok := c.rows.whole[id]
	return row, ok
}

// keepWhole holds row (rowid id), first letting go of about a quarter of
// the rows held (whatever map order gives) when they would take more than
// heldWholeMax.
func (c *Cache) keepWhole(id int64, row Row) {
	r := c.rows
	if r == nil {
		return
	}
	if r.whole == nil {
		r.whole = map[int64]Row{}
	}
	r.forget(id)
	size := rowBytes(row)
	if r.wholeBytes+size > heldWholeMax {
		for k := range r.whole {
			if r.forget(k); r.wholeBytes+size <= heldWholeMax*3/4 {
				break
			}
		}
	}
	r.whole[id] = row.clone()
	r.wholeBytes += size
}

// forget lets go of the row held whole with rowid id, if any.
func (r *heldRows) forget(id int64) {
	if row, ok := r.whole[id]; ok {
		delete(r.whole, id)
		r.wholeBytes -= rowBytes(row)
	}
}

// rowBytes is about what a row held takes: its text, and room for the
// rest.
func rowBytes(r Row) int {
	n := len(r.Content) + 512
	for _, t := range r.Tags {
		n += len(t) + 16
	}
	for k, v := range r.Files {
		n += len(k) + len(v) + 32
	}
	return n
}

// clone is r with slices of its own: what a cache holds is not what its
// callers may change.
func (r Row) clone() Row {
	r.Tags, r.RelatedIDs, r.Files = slices.Clone(r.Tags), slices.Clone(r.RelatedIDs), maps.Clone(r.Files)
	return r
}

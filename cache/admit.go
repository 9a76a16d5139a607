package cache

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// The rows a search's filter admits, for the vector lanes (signs.go):
// the share of a sample, or the whole set, as a bitset by rowid.

// countAdmitted returns how many of ids the filter admits.
func (c *Cache) countAdmitted(ctx context.Context, ids []int64, w string, args []any) (int, error) {
	idJSON, _ := json.Marshal(ids)
	var n int
	if err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM json_each(?) j CROSS JOIN entries e ON e.rowid = j.value WHERE `+w,
		append([]any{string(idJSON)}, args...)...).Scan(&n); err != nil {
		return 0, fmt.Errorf("cache: vector search: %w", err)
	}
	return n, nil
}

// admitted keeps, per filter, the set of rows it admits (a bitset by
// rowid) until entries change (entries_gen): the in-memory scan then
// passes over the rows a filter rejects, where it used to widen its
// candidates eightfold, up to every vector, looking for them (a search's
// commit lane in a repository with a handful of commits indexed: 20 ms of
// a 30 ms search at 10k entries); and the share of a sample of the rows
// with vectors that it admits, until entries or vectors change.
type admitted struct {
	gen    string
	sets   map[string][]uint64
	shares map[string]float64
}

// admitKey names a filter's conditions in c.admits.
func admitKey(w string, args []any) string {
	return w + "\x00" + fmt.Sprintf("%#v", args) // Sprint would run "a","bc" and "ab","c" together
}

// sampleShare returns the share of the rows with vectors that the filter
// admits, counted over 512 of them spread evenly across the index, and
// the key that names the filter in c.admits; held, when not nil, is the
// set of rows the filter admits (heldAdmits), counted in place of SQL.
func (c *Cache) sampleShare(ctx context.Context, w string, args []any, held []uint64) (float64, string, error) {
	gen, err := c.Meta(ctx, "entries_gen")
	if err != nil {
		return 0, "", err
	}
	gen += "/" + c.signs.gen // a table made again bumps vec_gen too
	if c.admits.gen != gen || c.admits.sets == nil {
		c.admits = admitted{gen: gen, sets: map[string][]uint64{}, shares: map[string]float64{}}
	}
	key := admitKey(w, args)
	if share, ok := c.admits.shares[key]; ok {
		return share, key, nil
	}
	var rows int
	for _, ch := range c.signs.chunks {
		rows += len(ch.rowids) / 8
	}
	var sample []int64
	step := max(1, rows/512)
	next := 0 // the slot to sample next, counted across chunks
	for _, ch := range c.signs.chunks {
		n := len(ch.rowids) / 8
		i := next
		for ; i < n; i += step {
			if ch.holds(i) {
				sample = append(sample, ch.rowid(i))
			}
		}
		next = i - n
	}
	var n int
	if held != nil {
		for _, id := range sample {
			if has(held, id) {
				n++
			}
		}
	} else if n, err = c.countAdmitted(ctx, sample, w, args); err != nil {
		return 0, "", err
	}
	share := float64(n) / float64(max(1, len(sample)))
	if len(c.admits.shares) >= 64 { // a handful of filters in turn; never many
		clear(c.admits.shares)
	}
	c.admits.shares[key] = share
	return share, key, nil
}

// admitted returns the rows the filter (w, args, named key) admits.
func (c *Cache) admitted(ctx context.Context, key, w string, args []any) ([]uint64, error) {
	if set := c.admits.sets[key]; set != nil {
		return set, nil
	}
	return c.buildAdmitted(ctx, key, w, args)
}

// buildAdmitted reads the rows the filter admits and keeps them under key.
func (c *Cache) buildAdmitted(ctx context.Context, key, w string, args []any) ([]uint64, error) {
	set, err := readAdmitted(ctx, c.db, w, args)
	if err != nil {
		return nil, err
	}
	if len(c.admits.sets) >= 8 { // a handful of filters in turn; never many
		clear(c.admits.sets)
	}
	c.admits.sets[key] = set
	return set, nil
}

// readAdmitted reads the rows the filter (w, args) admits as a bitset by
// rowid, gathered by rowid_set (rowset.c).
func readAdmitted(ctx context.Context, db *sql.DB, w string, args []any) ([]uint64, error) {
	var b []byte
	if err := db.QueryRowContext(ctx, `SELECT rowid_set(e.rowid) FROM entries e WHERE `+w, args...).Scan(&b); err != nil {
		return nil, fmt.Errorf("cache: admitted rows: %w", err)
	}
	set := make([]uint64, 0, (len(b)+7)/8) // not nil: nil admits every row
	for i := 0; i < len(b); i += 8 {
		var w [8]byte
		copy(w[:], b[i:])
		set = append(set, binary.LittleEndian.Uint64(w[:]))
	}
	return set, nil
}

// has reports whether rowid id is in the bitset.
func has(set []uint64, id int64) bool {
	return id >= 0 && int(id/64) < len(set) && set[id/64]&(1<<(id%64)) != 0
}

package cache

import (
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"math/bits"
	"sort"
)

// A long-lived process (the MCP server) keeps the sign bits of every
// vector and an int8 copy of it in memory (about 0.6 KB an entry): a scan
// of 100k entries is then about a millisecond instead of sqlite-vec's
// rows × k, and the int8 copies narrow the candidates before the exact
// re-scoring reads float vectors from SQLite. When vec_gen in meta changes
// (every StoreVectors and model switch bumps it) rows added since are
// appended; a model switch reloads everything. Entries deleted since are
// dropped by the join on vec_state, and an edited entry's old copy only
// makes it a little more or less likely to be re-scored exactly.
type bitIndex struct {
	gen, model string
	ids        []int64
	bits       []uint64 // sign bits, words per row
	words      int
	q8         []int8    // the vector scaled to int8, dim per row
	scale      []float32 // q8 × scale ≈ the vector
	dim        int
	maxID      int64
}

// KeepVectorIndex makes this cache keep the in-memory vector index.
func (c *Cache) KeepVectorIndex() { c.keepIndex = true }

// coarseIDs returns about k candidate entries nearest q: from sqlite-vec's
// sign-bit KNN, or from the in-memory index when kept, among the rows the
// filter (w, args) admits.
func (c *Cache) coarseIDs(ctx context.Context, q []float32, k int, w string, args []any) ([]int64, error) {
	if !c.keepIndex {
		rows, err := c.db.QueryContext(ctx, `SELECT rowid FROM vec_bits WHERE e MATCH vec_quantize_binary(?) AND k = ?`, encodeVec(q), min(k, 4096))
		if err != nil {
			return nil, fmt.Errorf("cache: vector search: %w", err)
		}
		defer rows.Close()
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		return ids, rows.Err()
	}
	gen, err := c.Meta(ctx, "vec_gen")
	if err != nil {
		return nil, err
	}
	if c.index == nil || c.index.model != c.vecModel {
		c.index = &bitIndex{model: c.vecModel, maxID: -1}
	}
	if c.index.gen != gen || c.index.maxID < 0 {
		if err := c.index.load(ctx, c, gen); err != nil {
			c.index = nil
			return nil, err
		}
	}
	// A filter whose set of admitted rows was built since entries last
	// changed scans with it. Otherwise, as most filters admit most entries
	// (memory, or all not archived), the nearest of every row serve when
	// nine in ten of them are admitted, without the set, which must be
	// built again whenever memory changes (after every save; 65 ms at 300k
	// entries); a filter that rejects more builds its set and scans again.
	admit, key, err := c.knownAdmitted(ctx, w, args)
	if err != nil {
		return nil, err
	}
	if admit == nil {
		if ids := c.index.nearest(q, k, nil); len(ids) > 0 {
			n, err := c.countAdmitted(ctx, ids, w, args)
			if err != nil {
				return nil, err
			}
			if 10*n >= 9*len(ids) {
				return ids, nil
			}
		}
		if admit, err = c.buildAdmitted(ctx, key, w, args); err != nil {
			return nil, err
		}
	}
	return c.index.nearest(q, k, admit), nil
}

// countAdmitted counts the rows among ids that the filter admits.
func (c *Cache) countAdmitted(ctx context.Context, ids []int64, w string, args []any) (int, error) {
	idJSON, _ := json.Marshal(ids)
	var n int
	err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM json_each(?) j CROSS JOIN entries e ON e.rowid = j.value WHERE `+w,
		append([]any{string(idJSON)}, args...)...).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("cache: vector search: %w", err)
	}
	return n, nil
}

// admitted keeps, per filter, the set of rows it admits (a bitset by
// rowid) until entries change (entries_gen): the in-memory scan then
// passes over the rows a filter rejects, where it used to widen its
// candidates eightfold, up to every vector, looking for them (a search's
// commit lane in a repository with a handful of commits indexed: 20 ms of
// a 30 ms search at 10k entries).
type admitted struct {
	gen  string
	sets map[string][]uint64
}

// admitted returns the rows the filter (where, args) admits.
func (c *Cache) admitted(ctx context.Context, w string, args []any) ([]uint64, error) {
	set, key, err := c.knownAdmitted(ctx, w, args)
	if err != nil || set != nil {
		return set, err
	}
	return c.buildAdmitted(ctx, key, w, args)
}

// knownAdmitted returns the filter's set if it was built since entries
// last changed (nil if not), and the key to build it under.
func (c *Cache) knownAdmitted(ctx context.Context, w string, args []any) ([]uint64, string, error) {
	gen, err := c.Meta(ctx, "entries_gen")
	if err != nil {
		return nil, "", err
	}
	if c.admits.gen != gen || c.admits.sets == nil {
		c.admits = admitted{gen: gen, sets: map[string][]uint64{}}
	}
	key := w + "\x00" + fmt.Sprintf("%#v", args) // Sprint would run "a","bc" and "ab","c" together
	return c.admits.sets[key], key, nil
}

// buildAdmitted reads the rows the filter admits and keeps them under key.
func (c *Cache) buildAdmitted(ctx context.Context, key, w string, args []any) ([]uint64, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT e.rowid FROM entries e WHERE `+w, args...)
	if err != nil {
		return nil, fmt.Errorf("cache: vector search: %w", err)
	}
	defer rows.Close()
	set := []uint64{} // not nil: nil admits every row
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		for int(id/64) >= len(set) {
			set = append(set, 0)
		}
		set[id/64] |= 1 << (id % 64)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(c.admits.sets) >= 8 { // a handful of filters in turn; never many
		clear(c.admits.sets)
	}
	c.admits.sets[key] = set
	return set, nil
}

// has reports whether rowid id is in the bitset.
func has(set []uint64, id int64) bool {
	return id >= 0 && int(id/64) < len(set) && set[id/64]&(1<<(id%64)) != 0
}

// signBits packs x > 0 per dimension, 64 to a word.
func signBits(v []float32) []uint64 {
	w := make([]uint64, (len(v)+63)/64)
	for i, x := range v {
		if x > 0 {
			w[i/64] |= 1 << (i % 64)
		}
	}
	return w
}

// load appends the rows added since the last load.
func (ix *bitIndex) load(ctx context.Context, c *Cache, gen string) error {
	rows, err := c.db.QueryContext(ctx, `SELECT s.rowid, v.vec FROM vec_state s JOIN vs.vectors v ON v.hash = s.hash
		WHERE v.model = ? AND s.rowid > ? ORDER BY s.rowid`, c.vecModel, ix.maxID)
	if err != nil {
		return fmt.Errorf("cache: load vector index: %w", err)
	}
	defer rows.Close()
	var blob []byte
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id, &blob); err != nil {
			return err
		}
		v := decodeVec(blob)
		if ix.dim == 0 {
			ix.dim, ix.words = len(v), (len(v)+63)/64
		}
		if len(v) != ix.dim {
			continue
		}
		ix.ids = append(ix.ids, id)
		ix.bits = append(ix.bits, signBits(v)...)
		var m float32
		for _, x := range v {
			m = max(m, x, -x)
		}
		sc := m / 127
		if sc == 0 {
			sc = 1
		}
		for _, x := range v {
			ix.q8 = append(ix.q8, int8(x/sc))
		}
		ix.scale = append(ix.scale, sc)
		ix.maxID = max(ix.maxID, id)
	}
	ix.maxID = max(ix.maxID, 0)
	ix.gen = gen
	return rows.Err()
}

// nearest returns about k candidates nearest q among the rows admit
// holds (nil: every row): the 8k smallest Hamming distances, narrowed to
// k by their int8 dot products.
func (ix *bitIndex) nearest(q []float32, k int, admit []uint64) []int64 {
	if len(q) != ix.dim || k <= 0 {
		return nil
	}
	qb := signBits(q)
	h := &distHeap{}
	wide := 8 * k
	for i := range ix.ids {
		if admit != nil && !has(admit, ix.ids[i]) {
			continue
		}
		row := ix.bits[i*ix.words : (i+1)*ix.words]
		d := 0
		for j, w := range row {
			d += bits.OnesCount64(w ^ qb[j])
		}
		if h.Len() < wide {
			heap.Push(h, distID{d, int64(i)})
		} else if d < (*h)[0].d {
			(*h)[0] = distID{d, int64(i)}
			heap.Fix(h, 0)
		}
	}
	type cand struct {
		id  int64
		dot float32
	}
	cands := make([]cand, 0, h.Len())
	for _, c := range *h {
		i := int(c.id)
		row := ix.q8[i*ix.dim : (i+1)*ix.dim]
		var dot float32
		for j, x := range row {
			dot += float32(x) * q[j]
		}
		cands = append(cands, cand{ix.ids[i], dot * ix.scale[i]})
	}
	sort.Slice(cands, func(a, b int) bool { return cands[a].dot > cands[b].dot })
	out := make([]int64, 0, k)
	for i := 0; i < len(cands) && i < k; i++ {
		out = append(out, cands[i].id)
	}
	return out
}

type distID struct {
	d  int
	id int64
}

// distHeap is a max-heap on distance: the root is the worst kept.
type distHeap []distID

func (h distHeap) Len() int           { return len(h) }
func (h distHeap) Less(i, j int) bool { return h[i].d > h[j].d }
func (h distHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *distHeap) Push(x any)        { *h = append(*h, x.(distID)) }
func (h *distHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

package cache

import (
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
)

// A long-lived process (the MCP server) keeps the sign bits of every
// vector in memory: a scan of 100k entries is then about a millisecond
// instead of sqlite-vec's rows × k. The index reloads when vec_gen in meta
// changes (every StoreVectors and model switch bumps it): rows added since
// are appended, a model switch reloads everything. Entries deleted since
// are dropped by the join on vec_state, and an edited entry's old bits only
// make it a little more or less likely to be re-scored exactly.
type bitIndex struct {
	gen, model string
	ids        []int64
	bits       []uint64
	words      int
	maxID      int64
}

// KeepVectorIndex makes this cache keep the in-memory sign-bit index.
func (c *Cache) KeepVectorIndex() { c.keepIndex = true }

// coarseIDs returns the k entries whose sign bits are nearest q's.
func (c *Cache) coarseIDs(ctx context.Context, q []float32, k int) ([]int64, error) {
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
	var qb []byte
	if err := c.db.QueryRowContext(ctx, `SELECT vec_quantize_binary(?)`, encodeVec(q)).Scan(&qb); err != nil {
		return nil, fmt.Errorf("cache: quantize query: %w", err)
	}
	return c.index.nearest(toWords(qb), k), nil
}

func toWords(b []byte) []uint64 {
	w := make([]uint64, (len(b)+7)/8)
	for i := range w {
		var buf [8]byte
		copy(buf[:], b[i*8:min(len(b), i*8+8)])
		w[i] = binary.LittleEndian.Uint64(buf[:])
	}
	return w
}

// load appends the rows added since the last load.
func (ix *bitIndex) load(ctx context.Context, c *Cache, gen string) error {
	rows, err := c.db.QueryContext(ctx, `SELECT rowid, e FROM vec_bits WHERE rowid > ?`, ix.maxID)
	if err != nil {
		return fmt.Errorf("cache: load vector index: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return err
		}
		w := toWords(b)
		if ix.words == 0 {
			ix.words = len(w)
		}
		if len(w) != ix.words {
			continue
		}
		ix.ids = append(ix.ids, id)
		ix.bits = append(ix.bits, w...)
		ix.maxID = max(ix.maxID, id)
	}
	ix.maxID = max(ix.maxID, 0)
	ix.gen = gen
	return rows.Err()
}

// nearest returns the ids of the k smallest Hamming distances to q.
func (ix *bitIndex) nearest(q []uint64, k int) []int64 {
	if len(q) != ix.words || k <= 0 {
		return nil
	}
	h := &distHeap{}
	for i, id := range ix.ids {
		row := ix.bits[i*ix.words : (i+1)*ix.words]
		d := 0
		for j, w := range row {
			d += bits.OnesCount64(w ^ q[j])
		}
		if h.Len() < k {
			heap.Push(h, distID{d, id})
		} else if d < (*h)[0].d {
			(*h)[0] = distID{d, id}
			heap.Fix(h, 0)
		}
	}
	out := make([]int64, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(distID).id
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

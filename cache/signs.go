package cache

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"sort"
	"strings"
)

// Every search's first stage reads the sign bits of every vector, as
// sqlite-vec stores them for the vec_bits table, straight from its shadow
// tables: vec_bits_chunks (chunk_id, size, validity bitmap, rowids as
// int64s) and vec_bits_vector_chunks00 (rowid = chunk_id, vectors: dim/8
// bytes per slot, bit i%8 of byte i/8 set when dimension i is positive).
// sqlite-vec keeps writing them (inserts fill the newest chunk, deletes
// clear a validity bit); this file only reads them. Its own KNN costs
// rows × k (a selection sort per chunk: 150 ms a scan at a million
// entries); this one is a heap, and breaks ties by rowid, so that every
// process (a command, the daemon, the MCP server) finds the same
// candidates. TestSignIndexMatchesSqliteVec pins the layout.
//
// A Cache keeps the chunks it read (about 56 bytes an entry) while vec_gen
// in meta, which every StoreVectors and model switch bumps, stays the
// same; when it moves, only the newest chunks are read again, with the
// validity of the older ones (their slots are never written again).
type signIndex struct {
	model, gen string
	width      int // bytes of sign bits per vector
	chunks     []signChunk
}

// signChunk is one row of vec_bits_chunks with its vectors.
type signChunk struct {
	id     int64
	valid  []byte // bit i%8 of byte i/8: slot i holds a vector
	rowids []byte // little-endian int64 per slot
	bits   []byte // width bytes per slot
}

// coarseIDs returns the k entries whose sign bits are nearest q's (ties to
// the lower rowid), among the rows the filter (w, args) admits.
func (c *Cache) coarseIDs(ctx context.Context, q []float32, k int, w string, args []any) ([]int64, error) {
	if err := c.loadSigns(ctx); err != nil {
		return nil, err
	}
	qb := quantize(q)
	if len(qb) != c.signs.width {
		return nil, nil
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
		if ids := c.signs.nearest(qb, k, nil); len(ids) > 0 {
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
	return c.signs.nearest(qb, k, admit), nil
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

// quantize packs q's signs as sqlite-vec's vec_quantize_binary does: bit
// i%8 of byte i/8 set when q[i] > 0.
func quantize(q []float32) []byte {
	b := make([]byte, (len(q)+7)/8)
	for i, x := range q {
		if x > 0 {
			b[i/8] |= 1 << (i % 8)
		}
	}
	return b
}

// loadSigns brings c.signs up to date with the vec_bits table.
func (c *Cache) loadSigns(ctx context.Context) error {
	tx, err := c.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // one snapshot for the generation and the chunks
	if err != nil {
		return fmt.Errorf("cache: vector search: %w", err)
	}
	defer tx.Rollback()
	var gen string
	if err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT value FROM meta WHERE key='vec_gen'), '')`).Scan(&gen); err != nil {
		return fmt.Errorf("cache: vector search: %w", err)
	}
	ix := c.signs
	if ix != nil && ix.model == c.vecModel && ix.gen == gen {
		return nil
	}
	if ix == nil || ix.model != c.vecModel || len(ix.chunks) == 0 {
		ix = &signIndex{model: c.vecModel}
	}
	from := int64(-1 << 63)
	if len(ix.chunks) > 0 {
		from = ix.chunks[len(ix.chunks)-1].id
		if !ix.revalidate(ctx, tx, from) {
			ix, from = &signIndex{model: c.vecModel}, -1<<63
		}
	}
	if err := ix.readFrom(ctx, tx, from); err != nil {
		c.signs = nil
		return fmt.Errorf("cache: read the vector index: %w", err)
	}
	ix.gen = gen
	c.signs = ix
	return nil
}

// revalidate reads the validity of the chunks before the one numbered
// last, and drops that one and any after it (readFrom reads them again).
// It reports false when the chunks are not those it holds (the table was
// made again): everything must be read again.
func (ix *signIndex) revalidate(ctx context.Context, tx *sql.Tx, last int64) bool {
	rows, err := tx.QueryContext(ctx, `SELECT chunk_id, validity FROM vec_bits_chunks WHERE chunk_id < ? ORDER BY chunk_id`, last)
	if err != nil {
		return false
	}
	defer rows.Close()
	i := 0
	for ; rows.Next(); i++ {
		var id int64
		var valid []byte
		if err := rows.Scan(&id, &valid); err != nil || i >= len(ix.chunks) || ix.chunks[i].id != id || len(valid) != len(ix.chunks[i].valid) {
			return false
		}
		ix.chunks[i].valid = valid
	}
	if rows.Err() != nil || i != len(ix.chunks)-1 {
		return false
	}
	ix.chunks = ix.chunks[:i]
	return true
}

// readFrom appends the chunks numbered from on.
func (ix *signIndex) readFrom(ctx context.Context, tx *sql.Tx, from int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT c.chunk_id, c.size, c.validity, c.rowids, v.vectors
		FROM vec_bits_chunks c JOIN vec_bits_vector_chunks00 v ON v.rowid = c.chunk_id WHERE c.chunk_id >= ? ORDER BY c.chunk_id`, from)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return nil // no model yet: no vectors
		}
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var ch signChunk
		var size int
		if err := rows.Scan(&ch.id, &size, &ch.valid, &ch.rowids, &ch.bits); err != nil {
			return err
		}
		if size <= 0 || len(ch.valid)*8 < size || len(ch.rowids) != 8*size || len(ch.bits)%size != 0 {
			return fmt.Errorf("vec_bits chunk %d is not laid out as expected (size %d, %d validity, %d rowid, %d vector bytes)",
				ch.id, size, len(ch.valid), len(ch.rowids), len(ch.bits))
		}
		if w := len(ch.bits) / size; ix.width == 0 {
			ix.width = w
		} else if w != ix.width {
			return fmt.Errorf("vec_bits chunk %d holds %d bytes a vector, others %d", ch.id, w, ix.width)
		}
		ix.chunks = append(ix.chunks, ch)
	}
	return rows.Err()
}

// nearest returns the k rowids among those admit holds (nil: every row)
// whose sign bits differ least from qb, nearest first, ties to the lower
// rowid.
func (ix *signIndex) nearest(qb []byte, k int, admit []uint64) []int64 {
	if k <= 0 || len(qb) != ix.width {
		return nil
	}
	words := len(qb) / 8
	qw := make([]uint64, words)
	for j := range qw {
		qw[j] = binary.LittleEndian.Uint64(qb[8*j:])
	}
	h := make(signHeap, 0, k)
	for ci := range ix.chunks {
		ch := &ix.chunks[ci]
		for i := 0; i < len(ch.rowids)/8; i++ {
			if ch.valid[i/8] == 0 {
				i |= 7 // none of these eight slots
				continue
			}
			if ch.valid[i/8]&(1<<(i%8)) == 0 {
				continue
			}
			id := int64(binary.LittleEndian.Uint64(ch.rowids[8*i:]))
			if admit != nil && !has(admit, id) {
				continue
			}
			v := ch.bits[i*ix.width : (i+1)*ix.width]
			d := 0
			for j, w := range qw {
				d += bits.OnesCount64(w ^ binary.LittleEndian.Uint64(v[8*j:]))
			}
			for j := 8 * words; j < len(v); j++ {
				d += bits.OnesCount8(v[j] ^ qb[j])
			}
			if len(h) < k {
				heap.Push(&h, signDist{d, id})
			} else if (signDist{d, id}).before(h[0]) {
				h[0] = signDist{d, id}
				heap.Fix(&h, 0)
			}
		}
	}
	sort.Slice(h, func(a, b int) bool { return h[a].before(h[b]) })
	out := make([]int64, len(h))
	for i, s := range h {
		out[i] = s.id
	}
	return out
}

// signDist is a row's Hamming distance from the query.
type signDist struct {
	d  int
	id int64
}

// before orders by distance, then rowid.
func (a signDist) before(b signDist) bool { return a.d < b.d || a.d == b.d && a.id < b.id }

// signHeap is a max-heap: the root is the worst kept.
type signHeap []signDist

func (h signHeap) Len() int           { return len(h) }
func (h signHeap) Less(i, j int) bool { return h[j].before(h[i]) }
func (h signHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *signHeap) Push(x any)        { *h = append(*h, x.(signDist)) }
func (h *signHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

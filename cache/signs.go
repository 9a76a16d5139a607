package cache

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync/atomic"
)

// Every search's first stage reads the sign bits of every vector, as
// sqlite-vec stores them for the vec_bits table, straight from its shadow
// tables: vec_bits_chunks (chunk_id, size, validity bitmap, rowids as
// int64s) and vec_bits_vector_chunks00 (rowid = chunk_id, vectors: dim/8
// bytes per slot, bit i%8 of byte i/8 set when dimension i is positive).
// sqlite-vec keeps writing them (inserts fill the newest chunk, deletes
// clear a validity bit); this file only reads them. Its own KNN costs
// rows × k (a selection sort per chunk: about 50 ms a scan at 300k
// entries); this one is linear in the rows and breaks ties by rowid, so that every
// process (a command, the daemon, the MCP server) finds the same
// candidates. TestSignIndexMatchesSqliteVec pins the layout.
//
// A Cache keeps the chunks it read (72 bytes an entry with the default
// model's 512 dimensions) while vec_gen in meta, which every StoreVectors
// and model switch bumps, stays the same; when it moves, only the newest
// chunks are read again, with the validity of the older ones (their slots
// are never written again), unless vec_made says the table was made again.
type signIndex struct {
	model     string
	made, gen string // vec_made and vec_gen when read
	width     int    // bytes of sign bits per vector
	nw        int    // words of them
	chunks    []signChunk
	scratch   []uint16 // hamming's distances, kept for the next scan
	// at is where each rowid's newest slot lies (its chunk's index <<
	// slotBits | the slot; noSlot: none), so that a filter admitting few
	// rows has only theirs scanned (sparse); unplaced: rows it cannot
	// place (a chunk too large, a rowid out of range) were read, and
	// every scan is whole.
	at       []uint32
	unplaced bool
}

// slotBits are the bits of a slot in signIndex.at, enough for
// sqlite-vec's chunks of 1,024.
const slotBits = 11

// noSlot is a rowid without a slot in signIndex.at.
const noSlot = math.MaxUint32

// placeOf is chunk ci's slot as signIndex.at and a layout's refs hold
// it, and splitPlace the chunk and slot of such a place.
func placeOf(ci, slot int) uint32 { return uint32(ci)<<slotBits | uint32(slot) }

func splitPlace(p uint32) (ci, slot int) { return int(p >> slotBits), int(p & (1<<slotBits - 1)) }

// place records where chunk ci's rows lie (at). The newest slot of a
// rowid is the one it holds a vector in, if any: older chunks' slots are
// only ever cleared.
func (ix *signIndex) place(ci int) {
	ch := &ix.chunks[ci]
	n := len(ch.rowids) / 8
	if ix.unplaced || n > 1<<slotBits || ci >= 1<<(32-slotBits)-1 {
		ix.at, ix.unplaced = nil, true
		return
	}
	for i := range n {
		if !ch.holds(i) {
			continue
		}
		id := ch.rowid(i)
		if id < 0 || id >= lexMaxRowid {
			ix.at, ix.unplaced = nil, true
			return
		}
		if grow := int(id) + 1 - len(ix.at); grow > 0 {
			ix.at = slices.Grow(ix.at, max(grow, len(ix.at)/4))
			for range grow {
				ix.at = append(ix.at, noSlot)
			}
		}
		ix.at[id] = placeOf(ci, i)
	}
}

// signChunk is one row of vec_bits_chunks with its vectors.
type signChunk struct {
	id     int64
	valid  []byte   // bit i%8 of byte i/8: slot i holds a vector
	rowids []byte   // little-endian int64 per slot
	words  []uint64 // the sign bits, nw words per slot, read as little-endian
	// mags are the magnitude bits (column m, magnitudeBits), laid out as
	// words: only the rows the Hamming distance keeps read them (nearest)
	mags []uint64
	// head holds the first headWords words of each slot's, side by side,
	// once a scan that reads those first needs them (signIndex.heads)
	head []uint64
}

// coarse returns the first vq.exact() rows of vq.ranked that the filter
// admits, in that order, each scored by its float vector (rows without
// one are passed over). whole is false when it stopped short of them at
// the edge of the ranked rows, which stale sign bits can cause: the caller then scores
// every row.
//
// Most filters admit most entries (memory, or all not archived): in an
// index of fewer than layoutMin rows, the nearest of all rows are taken
// in order, the rows the filter rejects left out, without the set of the
// rows it admits, which must be built again whenever memory changes in a
// command (after every save; 28 ms at a million entries, rowid_set). A
// filter that admits few (commits among much memory), or any filter of a
// larger index (planNearest), scans with its set. Which way is decided
// by the data alone (sampleShare, the index's size), never by what this
// process did before, so that every process finds the same.
func (c *Cache) coarse(ctx context.Context, vq *vectorQuery, q []float32) (scored []scoredRow, whole bool, err error) {
	if vq.ranked == nil {
		return nil, true, nil // nothing to rank by (no vectors, or q of another model)
	}
	w, args := vq.f.where()
	k, take := vq.k, vq.exact()
	// alike, the rows of a ranking that may lie within vq.minCos, when
	// the cut left some out (-1: none left out)
	kept := -1
	inOrder := func(ranked []int64, share float64) ([]scoredRow, error) {
		if kept = -1; vq.alike() {
			if n := vq.ix.alike(q, ranked, vq.minCos); n < len(ranked) {
				kept, ranked = n, ranked[:n]
			}
		}
		if vq.held != nil {
			return c.heldInOrder(ctx, q, ranked, take, vq.held)
		}
		return c.scoreInOrder(ctx, q, ranked, take, share, w, args)
	}
	// enough found, or every row with a vector seen, or every row that
	// may count seen and none of them left out by the filter
	enough := func(out []scoredRow, ranked []int64) bool {
		return len(out) >= take || len(ranked) < rerankPool*k || kept >= 0 && len(out) >= min(kept, take)
	}
	out, err := inOrder(vq.ranked, vq.share)
	whole = enough(out, vq.ranked)
	if err != nil || whole || vq.admit != nil {
		return out, whole, err
	}
	// the nearest of all rows held too few that the filter admits: scan
	// with its set
	admit := vq.held
	if admit == nil {
		aw, aargs := vq.f.admitting()
		if admit, err = c.admitted(ctx, vq.key, aw, aargs); err != nil {
			return nil, false, err
		}
	}
	ranked := vq.ix.nearest(q, k, admit, vq.offer, vq.alike())
	out, err = inOrder(ranked, 1)
	return out, enough(out, ranked), err
}

// scoreInOrder scores the first k rows of ranked that where admits and
// that have float vectors, asking first for as many as share (about what
// share of the rows where admits) says it takes, then for each batch as
// many more as the share admitted so far says: one query, not two, when
// the filter leaves out some of the nearest (a prompt's types).
func (c *Cache) scoreInOrder(ctx context.Context, q []float32, ranked []int64, k int, share float64, where string, args []any) ([]scoredRow, error) {
	var out []scoredRow
	seen := 0
	for seen < len(ranked) && len(out) < k {
		next := k - len(out)
		if seen == 0 && share < 1 {
			next = int(float64(k)*1.05/max(share, minShare)) + 1 // with room for the sample's error
		} else if seen > 0 {
			next = (k-len(out))*seen/max(len(out), 1) + 1
		}
		next = min(next, len(ranked)-seen)
		got, err := c.cosinesOf(ctx, q, ranked[seen:seen+next], where, args)
		if err != nil {
			return nil, err
		}
		out, seen = append(out, got...), seen+next
	}
	return out[:min(k, len(out))], nil
}

// rerankPool is how many times k rows nearest keeps by Hamming distance
// to rank by the dot product: fewer than rerankPool*k ranked rows means
// every row with a vector was seen.
const rerankPool = 8

// minShare is the share of a sample of the rows (sampleShare) that a
// filter must admit to be scanned without its set of admitted rows.
const minShare = 0.25

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

// LoadIndex reads the active model's sign bits into memory, or what
// changed of them since, as a search's vector lanes do first (loadSigns),
// and in a cache that holds vectors lays out a large index's rows not
// archived (liveLayout), again if a row came back from the archive: a
// long-lived process does it ahead of its first search, and the warm
// process between requests.
func (c *Cache) LoadIndex(ctx context.Context) error {
	c.freeRetired()
	if err := c.loadSigns(ctx); err != nil {
		return err
	}
	return c.relayIfBack(ctx)
}

// loadSigns brings c.signs up to date with the vec_bits table, read in
// one snapshot for the generation and the chunks.
func (c *Cache) loadSigns(ctx context.Context) error {
	return c.readSnapshot(ctx, func(tx snapshot) error { return c.loadSignsIn(ctx, tx) })
}

// loadSignsIn is loadSigns in the snapshot tx.
func (c *Cache) loadSignsIn(ctx context.Context, tx snapshot) error {
	var made, gen string
	if err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT value FROM meta WHERE key='vec_made'), ''), coalesce((SELECT value FROM meta WHERE key='vec_gen'), '')`).Scan(&made, &gen); err != nil {
		return fmt.Errorf("cache: vector search: %w", err)
	}
	ix := c.signs
	if ix != nil && ix.model == c.vecModel && ix.made == made && ix.gen == gen {
		return nil
	}
	if ix == nil || ix.model != c.vecModel || len(ix.chunks) == 0 || ix.made != made {
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
	ix.made, ix.gen = made, gen
	c.signs = ix
	return nil
}

// revalidate reads the validity of the chunks before the one numbered
// last, and drops that one and any after it (readFrom reads them again).
// It reports false when the chunks are not those it holds (the table was
// made again): everything must be read again.
func (ix *signIndex) revalidate(ctx context.Context, tx snapshot, last int64) bool {
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

// readFrom appends the chunks numbered from on. sqlite-vec declares the
// vector table's key as "rowid PRIMARY KEY" without a type: compared with
// the integer chunk_id, its index cannot serve, and SQLite scanned every
// chunk's row (64 KB each) to read the newest, 7.5 ms after each save at
// a million entries. chunk_id + 0 carries no affinity, so the index
// serves.
func (ix *signIndex) readFrom(ctx context.Context, tx snapshot, from int64) error {
	var slab, magSlab []uint64 // the words of the chunks to come
	if from == -1<<63 {
		// the sign bits side by side as before, so that a scan reads
		// them in one run; the magnitude bits after them
		slab = slabFor(ctx, tx, ix)
		slab, magSlab = slab[:len(slab)/2], slab[len(slab)/2:]
	}
	rows, err := tx.QueryContext(ctx, `SELECT c.chunk_id, c.size, c.validity, c.rowids, v.vectors, m.vectors
		FROM vec_bits_chunks c JOIN vec_bits_vector_chunks00 v ON v.rowid = c.chunk_id + 0 JOIN vec_bits_vector_chunks01 m ON m.rowid = c.chunk_id + 0
		WHERE c.chunk_id >= ? ORDER BY c.chunk_id`, from)
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
		var vecs, mags sql.RawBytes // packed into words before the next row: not copied
		if err := rows.Scan(&ch.id, &size, &ch.valid, &ch.rowids, &vecs, &mags); err != nil {
			return err
		}
		if size <= 0 || len(ch.valid)*8 < size || len(ch.rowids) != 8*size || len(vecs)%size != 0 || len(mags) != len(vecs) {
			return fmt.Errorf("vec_bits chunk %d is not laid out as expected (size %d, %d validity, %d rowid, %d vector bytes, %d magnitude bytes)",
				ch.id, size, len(ch.valid), len(ch.rowids), len(vecs), len(mags))
		}
		if w := len(vecs) / size; ix.width == 0 {
			ix.width, ix.nw = w, (w+7)/8
		} else if w != ix.width {
			return fmt.Errorf("vec_bits chunk %d holds %d bytes a vector, others %d", ch.id, w, ix.width)
		}
		if n := size * ix.nw; len(slab) >= n {
			ch.words, ch.mags, slab, magSlab = slab[:n:n], magSlab[:n:n], slab[n:], magSlab[n:]
		} else {
			ch.words, ch.mags = make([]uint64, n), make([]uint64, n)
		}
		for i := 0; i < size; i++ {
			ix.pack(ch.words[i*ix.nw:(i+1)*ix.nw], vecs[i*ix.width:(i+1)*ix.width])
			ix.pack(ch.mags[i*ix.nw:(i+1)*ix.nw], mags[i*ix.width:(i+1)*ix.width])
		}
		ix.chunks = append(ix.chunks, ch)
		ix.place(len(ix.chunks) - 1)
	}
	return rows.Err()
}

// slabFor returns room for the words of every chunk of the table, sign
// and magnitude bits, in one allocation backed by huge pages (hugePages)
// and apart from Go's heap (apart: 128 MB at a million entries, given
// back once ix is unreachable), when the sign bits fill at least slabMin
// words; nil when they do not. A read of every chunk takes its chunks'
// words from it; chunks read after it (the newest, again after each
// save) get their own.
func slabFor(ctx context.Context, tx snapshot, ix *signIndex) []uint64 {
	var n int64
	err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(c.size * ((length(v.vectors) / c.size + 7) / 8)), 0)
		FROM vec_bits_chunks c JOIN vec_bits_vector_chunks00 v ON v.rowid = c.chunk_id + 0 WHERE c.size > 0`).Scan(&n)
	if err != nil || n < slabMin {
		return nil
	}
	mem, _ := apart(ix, int(16*n))
	slab := words(mem, 0, int(2*n))
	hugePages(slab)
	return slab
}

// slabMin is the fewest words (16 MB) read into one slab (slabFor); a
// variable for tests.
var slabMin int64 = 2 << 20

// pack reads sign bytes b as little-endian words (the last padded with
// zeros, which no distance counts).
func (ix *signIndex) pack(dst []uint64, b []byte) {
	for j := range dst {
		if len(b) >= 8*j+8 {
			dst[j] = binary.LittleEndian.Uint64(b[8*j:])
			continue
		}
		var w uint64
		for k := 0; 8*j+k < len(b); k++ {
			w |= uint64(b[8*j+k]) << (8 * k)
		}
		dst[j] = w
	}
}

// nearest ranks rowids among those admit holds (nil: every row) by how
// near q they lie: the 8k (rerankPool) whose sign bits differ least from
// q's (ties to the lower rowid), ordered by q's cosine with each row's
// two bits a dimension (twoBitCosine), which tells apart what the
// Hamming distance ties and ranks nearly as the float vectors do. The
// float vectors' exact scores come after (Nearest), for the first few
// of this order (exactPool). With offer, hamming offers a large scan to
// goroutines that may join it; with alike, it reads a large index's
// first words first (headFirst).
func (ix *signIndex) nearest(q []float32, k int, admit []uint64, offer func(*signScan), alike bool) []int64 {
	return ix.rerank(q, ix.hamming(quantize(q), rerankPool*k, admit, offer, alike))
}

// rerank orders the rows near (hamming's) by q's cosine with each row's
// two bits a dimension (twoBitCosine), ties to the lower rowid.
func (ix *signIndex) rerank(q []float32, near []signDist) []int64 {
	ix.askFor(near)
	sum, total := byteSums(q)
	dots := make([]float32, len(near))
	ids := make([]int64, len(near))
	for n, s := range near {
		ch := &ix.chunks[s.chunk]
		at := s.slot * ix.nw
		dots[n], ids[n] = twoBitCosine(sum, total, len(q), ch.words[at:at+ix.nw], ch.mags[at:at+ix.nw]), s.id
	}
	return byDot(dots, ids)
}

// askFor reads the first word of the sign and magnitude bits of each of
// near's rows in a loop that does nothing else: in a large index the
// rows lie far apart, and the CPU waits on many of those reads at once
// here, where rerank's loop, summing each row's cosine, waits on each in
// turn. Over the 1,600 rows of a memory lane's pool at a million entries
// (in process, each after 64 MB of other reads, medians of 600), rerank
// took 0.47-0.53 ms against 0.89-0.97 (four runs, the builds in turn).
func (ix *signIndex) askFor(near []signDist) {
	var sum uint64
	for _, s := range near {
		ch := &ix.chunks[s.chunk]
		at := s.slot * ix.nw
		sum += ch.words[at] ^ ch.mags[at]
	}
	asked.Store(sum) // used: the reads are made
}

// asked keeps askFor's sum.
var asked atomic.Uint64

// alike returns how many of the first rows of ranked, in rerank's order,
// may lie within cosine minCos of q by their two bits a dimension
// (alikeSlack); all of them when it cannot tell where a row's bits lie or
// what its two bits say (alikeSelfMin).
func (ix *signIndex) alike(q []float32, ranked []int64, minCos float64) int {
	if ix.unplaced || len(q) == 0 {
		return len(ranked)
	}
	sum, total := byteSums(q)
	norm := math.Sqrt(float64(dot(q, q)))
	if norm == 0 {
		return len(ranked)
	}
	signs, mags := make([]uint64, ix.nw), make([]uint64, ix.nw)
	ix.pack(signs, quantize(q))
	ix.pack(mags, magnitudeBits(encodeVec(q)))
	self := float64(twoBitCosine(sum, total, len(q), signs, mags)) / norm
	if self < alikeSelfMin {
		return len(ranked)
	}
	least := minCos * (self - alikeSlack) * norm
	for i, id := range ranked {
		ci, slot, ok := ix.slotOf(id)
		if !ok {
			return len(ranked)
		}
		ch := &ix.chunks[ci]
		at := slot * ix.nw
		if float64(twoBitCosine(sum, total, len(q), ch.words[at:at+ix.nw], ch.mags[at:at+ix.nw])) < least {
			return i
		}
	}
	return len(ranked)
}

// The second bit of a dimension says whether its magnitude is large: set
// when |x_i| is at least magCut times the vector's root mean square,
// about half of them for an embedding's roughly normal components
// (0.674 is the median of |x| for a normal x, in units of its standard
// deviation). A row's vector is then read as ±magWeight where the bit is
// set and ±1 where it is not, and q's cosine with that ranks the rows the
// Hamming distance kept. On the 1M bench repository (the corpus's 30
// queries, the 1,600 rows of a memory lane's pool), recall@10 against
// exact search after exact scores of the first 20, 30, 40 and 200 of that
// order: 0.947, 0.987, 0.993 and 0.997; ordered by the signs alone (their
// ±1 dot product) 0.740, 0.817, 0.860 and 0.987. On the 10k repository:
// 1.000 from 30 on, against 0.897 at 30 and 1.000 from 100 on.
const (
	magCut    = 0.674
	magWeight = 3
)

// byteSums returns sum, where sum[j][b] is the sum of q over the
// dimensions whose bits byte j of a row holds set when it is b, and the
// sum of q over every dimension.
func byteSums(q []float32) (sum [][256]float32, total float32) {
	sum = make([][256]float32, (len(q)+7)/8)
	for j := range sum {
		for b := 1; b < 256; b++ {
			low := b & -b
			i := 8*j + bits.TrailingZeros8(uint8(low))
			sum[j][b] = sum[j][b&^low]
			if i < len(q) {
				sum[j][b] += q[i]
			}
		}
		total += sum[j][255]
	}
	return sum, total
}

// twoBitCosine is q's cosine with the row whose sign bits and magnitude
// bits are signs and mags, read as magWeight and 1 (the cosine up to q's
// norm, which every row shares). sum and total are q's (byteSums); dim
// is q's length.
func twoBitCosine(sum [][256]float32, total float32, dim int, signs, mags []uint64) float32 {
	// Σ q_i·s_i = 2·Σ_{s set} q_i − Σ q_i, and the same over the rows'
	// large dimensions: 2·Σ_{s and m set} q_i − Σ_{m set} q_i
	var ts, tsm, tm float32
	large := 0
	for j := range sum {
		sb, mb := byte(signs[j/8]>>(8*(j%8))), byte(mags[j/8]>>(8*(j%8)))
		ts += sum[j][sb]
		tsm += sum[j][sb&mb]
		tm += sum[j][mb]
	}
	for _, w := range mags {
		large += bits.OnesCount64(w)
	}
	dot := 2*ts - total + (magWeight-1)*(2*tsm-tm)
	return dot / float32(math.Sqrt(float64((magWeight*magWeight-1)*large+dim)))
}

// magnitudeBits returns the magnitude bits (magCut) of the vector in the
// little-endian float32 blob b, laid out as sign bits are: bit i%8 of
// byte i/8 for dimension i.
func magnitudeBits(b []byte) []byte {
	n := len(b) / 4
	var sq float64
	for i := range n {
		x := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		sq += x * x
	}
	cut := magCut * math.Sqrt(sq/float64(max(n, 1)))
	out := make([]byte, (n+7)/8)
	for i := range n {
		if math.Abs(float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))) >= cut {
			out[i/8] |= 1 << (i % 8)
		}
	}
	return out
}

// byDot returns ids ordered by their dots, highest first, ties to the
// lower id. It sorts integers, each a dot's bits made to sort as unsigned
// above its place: sorting (dot, id) pairs with a comparison function took
// a third of nearest (0.3 ms of a prompt's 1,600 rows at 10k entries).
func byDot(dots []float32, ids []int64) []int64 {
	keys := make([]uint64, len(dots))
	for i, d := range dots {
		if d == 0 {
			d = 0 // -0 and 0 tie, as they compare
		}
		b := math.Float32bits(d)
		if b&(1<<31) != 0 {
			b = ^b
		} else {
			b |= 1 << 31
		}
		keys[i] = uint64(^b)<<32 | uint64(i) // highest dot first
	}
	slices.Sort(keys)
	out := make([]int64, len(keys))
	for i, k := range keys {
		out[i] = ids[uint32(k)]
	}
	// equal dots: by id (their keys kept their places)
	for lo := 0; lo < len(keys); {
		hi := lo + 1
		for hi < len(keys) && keys[hi]>>32 == keys[lo]>>32 {
			hi++
		}
		if hi-lo > 1 {
			slices.Sort(out[lo:hi])
		}
		lo = hi
	}
	return out
}

// hamming returns the k rows among those admit holds (nil: every row)
// whose sign bits differ least from qb, ties to the lower rowid, in no
// particular order. It counts the rows at each distance as it scans, then
// keeps those nearer than the k-th's and, of those at its distance, the
// lowest rowids: no heap (at 10k entries, k is a sixth of the rows). The
// rows within the k-th's distance are picked out by rowsWithin, eight at
// a time in C: a pass over a million distances in Go, four at a time,
// took 2.1 ms of a prompt hook's 22 in the warm process at a million
// entries, and this 0.8 (traced, medians of 15 prompts). A
// large index's scan is first offered (offer, if not nil) to goroutines
// that may join it (signScan). With headFirst, a large index is scanned
// in two stages (refine), for what lies very near.
func (ix *signIndex) hamming(qb []byte, k int, admit []uint64, offer func(*signScan), headFirst bool) []signDist {
	if k <= 0 || len(qb) != ix.width {
		return nil
	}
	qw := make([]uint64, ix.nw)
	ix.pack(qw, qb)
	// each chunk's first row in dist
	starts := make([]int, len(ix.chunks)+1)
	for ci := range ix.chunks {
		starts[ci+1] = starts[ci] + len(ix.chunks[ci].rowids)/8
	}
	if admit != nil && !ix.unplaced && ones(admit)*sparseScan < starts[len(ix.chunks)] {
		return ix.sparse(qw, k, admit)
	}
	dist := slices.Grow(ix.scratch[:0], starts[len(ix.chunks)])[:starts[len(ix.chunks)]]
	ix.scratch = dist
	sc := &signScan{ix: ix, qw: qw, admit: admit, dist: dist, starts: starts, count: make([]int, 8*len(qb)+1)}
	sc.head = headFirst && len(dist) >= headRows && ix.heads()
	if offer != nil && len(dist) >= parallelRows {
		offer(sc)
	}
	count := sc.run()
	if sc.head {
		return ix.refine(dist, starts, count, qw, k)
	}
	cut, within := kthDistance(count, k)
	near := ix.within(dist, starts, uint16(cut), within)
	for j := range near {
		near[j].id = ix.chunks[near[j].chunk].rowid(near[j].slot)
	}
	return keepWithin(near, k, cut)
}

// kthDistance returns the distance of the k-th nearest of the rows that
// count counts at each distance (the last distance if there are fewer),
// and how many lie at most there.
func kthDistance(count []int, k int) (cut, within int) {
	for cut < len(count)-1 && within+count[cut] < k {
		within += count[cut]
		cut++
	}
	return cut, within + count[cut]
}

// within returns, in order, where the rows of dist (from starts[ci] for
// chunk ci) at most cut from the query lie, each with its distance there,
// n of them at most; no rowid is read.
func (ix *signIndex) within(dist []uint16, starts []int, cut uint16, n int) []signDist {
	at := make([]int32, n)
	at = at[:rowsWithin(dist, cut, at)] // skip lies beyond every cut
	near := make([]signDist, len(at))
	ci := 0
	for j, r := range at {
		for int(r) >= starts[ci+1] {
			ci++
		}
		near[j] = signDist{d: int(dist[r]), chunk: ci, slot: int(r) - starts[ci]}
	}
	return near
}

// sparseScan is what a row a filter admits costs when scanned alone (a
// slot found through signIndex.at), in rows of a whole scan. The commits
// among a million entries (12k rows) are scanned alone.
var sparseScan = 16

// ones is how many rows the set admits.
func ones(set []uint64) int {
	n := 0
	for _, w := range set {
		n += bits.OnesCount64(w)
	}
	return n
}

// slotOf returns the chunk and slot where rowid id's bits lie (as place
// recorded them), and whether they are there: a slot that still holds
// id's vector.
func (ix *signIndex) slotOf(id int64) (ci, slot int, ok bool) {
	if id < 0 || id >= int64(len(ix.at)) || ix.at[id] == noSlot {
		return 0, 0, false
	}
	ci, slot = splitPlace(ix.at[id])
	if ci >= len(ix.chunks) || slot >= len(ix.chunks[ci].rowids)/8 {
		return 0, 0, false
	}
	ch := &ix.chunks[ci]
	return ci, slot, ch.holds(slot) && ch.rowid(slot) == id
}

// sparse is hamming over the rows admit holds alone, each found through
// signIndex.at: the same rows, at the same distances.
func (ix *signIndex) sparse(qw []uint64, k int, admit []uint64) []signDist {
	var near []signDist
	for wi, w := range admit {
		for ; w != 0; w &= w - 1 {
			id := int64(wi)*64 + int64(bits.TrailingZeros64(w))
			if id >= int64(len(ix.at)) {
				break
			}
			ci, slot, ok := ix.slotOf(id)
			if !ok {
				continue // no vector, or it is gone
			}
			near = append(near, signDist{ix.chunks[ci].distance(slot, qw), id, ci, slot})
		}
	}
	return keepNearest(near, k, 64*ix.nw)
}

// keepNearest returns the k of near whose distances (at most maxDist) are
// least, ties to the lower rowid, in no particular order. It counts them
// at each distance rather than sort them all: a search's commit lane
// (12,022 commits among a million entries) ranked in 5.5 ms with a sort,
// 1.7 ms so (medians of 30 warm MCP searches).
func keepNearest(near []signDist, k, maxDist int) []signDist {
	if len(near) <= k {
		return near
	}
	return keepWithin(near, k, nearestCut(near, k, maxDist))
}

// keepWithin returns those of near nearer than cut, the k-th nearest's
// distance, and of those at it the lowest rowids, k in all at most.
func keepWithin(near []signDist, k, cut int) []signDist {
	out := make([]signDist, 0, k)
	var tied []signDist
	for _, s := range near {
		switch {
		case s.d < cut:
			out = append(out, s)
		case s.d == cut:
			tied = append(tied, s)
		}
	}
	slices.SortFunc(tied, func(a, b signDist) int { return cmp.Compare(a.id, b.id) })
	return append(out, tied[:min(len(tied), k-len(out))]...)
}

// nearestCut is the distance of the k-th nearest of near (maxDist if
// fewer): the distances are counted, not sorted.
func nearestCut(near []signDist, k, maxDist int) int {
	count := make([]int, maxDist+1)
	for _, s := range near {
		count[s.d]++
	}
	cut, _ := kthDistance(count, k)
	return cut
}

// parallelRows is the size of index from which hamming offers its scan
// to other goroutines (signScan).
const parallelRows = 100_000

// skip is the distance of a row without a vector, or not admitted.
const skip = math.MaxUint16

// distances writes into dist (from starts[ci] for chunk ci) the Hamming
// distance from qw of every row of chunks lo to hi, skip for a row
// without a vector or that admit (nil: every row) does not hold, and
// counts the rows at each distance.
func (ix *signIndex) distances(dist []uint16, starts []int, lo, hi int, qw, admit []uint64, count []int) {
	if len(qw) == 8 {
		ix.distances8(dist, starts, lo, hi, (*[8]uint64)(qw), admit, count)
		return
	}
	for ci := lo; ci < hi; ci++ {
		ch := &ix.chunks[ci]
		at := starts[ci]
		for i := range starts[ci+1] - at {
			if !ch.holds(i) || admit != nil && !has(admit, ch.rowid(i)) {
				dist[at+i] = skip
				continue
			}
			d := ch.distance(i, qw)
			dist[at+i] = uint16(d)
			count[d]++
		}
	}
}

// distances8 is distances for 512 bits a vector (the default model's),
// the words unrolled and bounds checks hoisted (at 100k entries it took
// the sign-bit ranking from 1.50 to 1.31 ms), two rows at a time, each
// counted in a histogram of its own: counting every row in one made each
// increment wait on the last (the distances of a scan crowd a few values):
// hamming over a million rows on one core took 20.7 ms, now 17.0.
//
// Where the CPU has AVX-512 or POPCNT (hammingFast), hamming.c measures
// the same distances.
func (ix *signIndex) distances8(dist []uint16, starts []int, lo, hi int, q *[8]uint64, admit []uint64, count []int) {
	if hammingFast {
		for ci := lo; ci < hi; ci++ {
			ch := &ix.chunks[ci]
			at, n := starts[ci], starts[ci+1]-starts[ci]
			distancesC(ch.words, 8, ch.valid, ch.rowids, n, admit, q[:], dist[at:at+n], count)
		}
		return
	}
	var hist [2][1024]int32 // a distance is at most 512: d&1023 is d, without a bounds check
	one := func(w *[8]uint64) int {
		return bits.OnesCount64(w[0]^q[0]) + bits.OnesCount64(w[1]^q[1]) + bits.OnesCount64(w[2]^q[2]) + bits.OnesCount64(w[3]^q[3]) +
			bits.OnesCount64(w[4]^q[4]) + bits.OnesCount64(w[5]^q[5]) + bits.OnesCount64(w[6]^q[6]) + bits.OnesCount64(w[7]^q[7])
	}
	for ci := lo; ci < hi; ci++ {
		ch := &ix.chunks[ci]
		at := starts[ci]
		n := starts[ci+1] - at
		out := dist[at : at+n]
		words := ch.words[:8*n]
		valid := ch.valid[:(n+7)/8]
		scanned := func(i int) bool {
			return valid[i/8]&(1<<(i%8)) != 0 && (admit == nil || has(admit, ch.rowid(i)))
		}
		// alone: a row of a pair with a row not scanned, or the last of an
		// odd chunk
		alone := func(i int) {
			if !scanned(i) {
				out[i] = skip
				return
			}
			d := one((*[8]uint64)(words[8*i:]))
			out[i] = uint16(d)
			hist[i&1][d&1023]++
		}
		i := 0
		for ; i+1 < n; i += 2 {
			if !scanned(i) || !scanned(i+1) {
				alone(i)
				alone(i + 1)
				continue
			}
			d0, d1 := one((*[8]uint64)(words[8*i:])), one((*[8]uint64)(words[8*i+8:]))
			out[i], out[i+1] = uint16(d0), uint16(d1)
			hist[0][d0&1023]++
			hist[1][d1&1023]++
		}
		if i < n {
			alone(i)
		}
	}
	for d := range count[:8*64+1] {
		count[d] += int(hist[0][d] + hist[1][d])
	}
}

// distance is the Hamming distance of slot i's sign bits from qw (a
// row's words).
func (ch *signChunk) distance(i int, qw []uint64) int {
	return bitsApart(ch.words[i*len(qw):(i+1)*len(qw)], qw)
}

// bitsApart is the Hamming distance of two rows of sign bits, as many
// words each.
func bitsApart(a, b []uint64) int {
	d := 0
	for j, w := range a {
		d += bits.OnesCount64(w ^ b[j])
	}
	return d
}

// holds reports whether slot i holds a vector (its validity bit).
func (ch *signChunk) holds(i int) bool { return ch.valid[i/8]&(1<<(i%8)) != 0 }

// rowid is the rowid slot i holds.
func (ch *signChunk) rowid(i int) int64 {
	return int64(binary.LittleEndian.Uint64(ch.rowids[8*i : 8*i+8]))
}

// signDist is a row's Hamming distance from the query, and where its bits
// are.
type signDist struct {
	d           int
	id          int64
	chunk, slot int
}

package cache

import "math/bits"

// A near-duplicate check (NearestAlike: an MCP save's) wants the few rows
// whose sign bits lie very near the query's, and a whole scan reads every
// row's 64 bytes for them: 10.8 ms of a save at a million entries, on a
// machine that reads memory at about 5 GB/s a core. A large index is read
// in two stages instead. The first reads each row's first headWords words
// alone, a quarter of the bytes, kept side by side (signChunk.head), and
// keeps the headKeep rows nearest by those (and all at the last one's
// distance). The second measures those rows' whole bits and keeps the k
// nearest, as a whole scan would among them.
//
// A row at cosine 0.9 of the query differs from it in about 18 of those
// 128 bits; the headKeep-th nearest lay at 12 to 43 of them (median 24)
// for 203 entries' vectors taken as queries in the make bench fixture of
// a million entries, whose memory gathers in dense clusters. There 197
// of the 203 checks found the same near-duplicates as a whole scan, in
// 6.7 ms against 11.5 (in process, exact scores included); the other six
// each found three or more either way and differed in one of them, the
// two-stage scan's the nearer in one and the farther in three. (Keeping
// 16,384 rows: three differed, in 9.6 ms.)
//
// A search's pools are not read this way: the rows that count there lie
// far nearer the bulk, and the first stage lost them (recall@10 of the
// vector stage over 50 queries at a million entries: 0.976 by a whole
// scan, 0.940 with a first stage keeping 16 times the pool, and no
// faster, since each row the second stage reads is a cache miss).

// headWords is how many words of each row the first stage reads.
const headWords = 2

// headRows is the size of index from which NearestAlike scans in two
// stages, and headKeep how many rows the first stage keeps at least
// (variables: tests run both stages on small indexes).
var (
	headRows = 200_000
	headKeep = 4096
)

// heads fills the first words of the rows of every chunk that lacks them
// (signChunk.head), and reports whether rows are wide enough to be read
// so. Only a near-duplicate check on a large index reads them: a search
// never pays for the copy (16 MB at a million entries).
func (ix *signIndex) heads() bool {
	if ix.nw <= headWords {
		return false
	}
	for ci := range ix.chunks {
		ch := &ix.chunks[ci]
		if n := len(ch.words) / ix.nw; len(ch.head) != n*headWords {
			ch.head = make([]uint64, n*headWords)
			for i := range n {
				copy(ch.head[i*headWords:(i+1)*headWords], ch.words[i*ix.nw:])
			}
		}
	}
	return true
}

// headDistances is distances over each row's first headWords words.
// hamming.c adds to 513 counts, which an index of fewer than 512 bits a
// row does not have: such an index is counted in Go.
func (ix *signIndex) headDistances(dist []uint16, starts []int, lo, hi int, qw, admit []uint64, count []int) {
	if hammingFast && len(count) > 512 {
		for ci := lo; ci < hi; ci++ {
			ch := &ix.chunks[ci]
			at, n := starts[ci], starts[ci+1]-starts[ci]
			distancesC(ch.head, headWords, ch.valid, ch.rowids, n, admit, qw, dist[at:at+n], count)
		}
		return
	}
	var hist [2][256]int32 // a distance is at most 128: d&255 is d, without a bounds check
	q0, q1 := qw[0], qw[1]
	for ci := lo; ci < hi; ci++ {
		ch := &ix.chunks[ci]
		at := starts[ci]
		n := starts[ci+1] - at
		out := dist[at : at+n]
		head := ch.head[:2*n]
		for i := range n {
			if !ch.holds(i) || admit != nil && !has(admit, ch.rowid(i)) {
				out[i] = skip
				continue
			}
			d := bits.OnesCount64(head[2*i]^q0) + bits.OnesCount64(head[2*i+1]^q1)
			out[i] = uint16(d)
			hist[i&1][d&255]++
		}
	}
	for d := range count[:64*headWords+1] {
		count[d] += int(hist[0][d] + hist[1][d])
	}
}

// refine is hamming's second stage: dist holds each row's distance by its
// first words, count the rows at each. Of the headKeep nearest by those
// (and any at the last one's distance), it returns the k whose whole bits
// differ least from qw, ties to the lower rowid.
func (ix *signIndex) refine(dist []uint16, starts []int, count []int, qw []uint64, k int) []signDist {
	cut, within := kthDistance(count, max(headKeep, k))
	near := ix.within(dist, starts, uint16(cut), within)
	// measured apart from the pass that found them: their bits lie far
	// apart, and a loop that does nothing else waits on several at once
	for j := range near {
		s := &near[j]
		s.d = ix.chunks[s.chunk].distance(s.slot, qw)
	}
	// the rowids (far apart too) only of those that may be kept
	last := nearestCut(near, k, 64*ix.nw)
	kept := near[:0]
	for _, s := range near {
		if s.d <= last {
			s.id = ix.chunks[s.chunk].rowid(s.slot)
			kept = append(kept, s)
		}
	}
	return keepWithin(kept, k, last)
}

// rowsWithinGo is rowsWithin in Go.
func rowsWithinGo(dist []uint16, cut uint16, at []int32) int {
	n := 0
	for i, d := range dist {
		if d <= cut && n < len(at) {
			at[n] = int32(i)
			n++
		}
	}
	return n
}

package cache

import (
	"context"
	"math/bits"
	"slices"
	"unsafe"
)

// A search's vector lane reads the sign bits of every row the index
// holds, 64 bytes each: at a million entries that is bound by memory's
// bandwidth, and a prompt hook waits for it after the query's embedding.
// Most searches leave the archived entries out, and decay archives many
// (a third of the bench's million). So a large index is ranked, by every
// process alike, among the rows the lane's filter admits (planNearest),
// and a cache that holds vectors (a long-lived process) keeps the sign
// bits of the rows not archived side by side (liveLayout): a filter that
// leaves the archived out scans those and the chunks read since, a third
// less to read, each row it rejects marked as without a vector (a
// layoutView), so that the scan reads no rowid and no set. The same
// rows at the same distances as a scan of every chunk with the filter's
// set (TestLiveLayoutRanksAsTheIndex), but where the layout is large
// enough to be cut into clusters, and a scan reads the nearest of them
// (clusters.go). On a copy of the 1M bench
// repository, the two builds in turn: the prompt hook in the warm process
// 15.6 against 16.9 ms (60 prompts each), warm MCP hybrid search 16.3
// against 18.7 ms with the same results for all 30 queries (60 searches
// each), for 51 MB more in each long-lived process, mapped apart from
// Go's heap (the MCP server's peak RSS 876 against 816 MiB).

// liveLayout is a copy of the sign bits of the rows of an index's chunks
// [0, upTo) that were not archived when it was made, in their order, in
// chunks of layoutChunk rows. Those chunks of the index never take a row
// again (readFrom reads only the newest again); their rows only lose
// their vectors, which the copy follows (follow). A row archived since
// stays in it, and a view leaves it out; a row no longer archived is not
// in it, and the layout is made again (fits).
type liveLayout struct {
	ix     *signIndex // the index laid out
	upTo   int        // its chunks laid out; later ones are scanned in place
	valid  [][]byte   // the validity of chunks [0, upTo) that the copy follows
	held   int        // the rows copied
	n      int        // the copy's rows, with the clusters' padding
	refs   []uint32   // each copied row's place in ix (placeOf)
	pos    []int32    // each rowid's row in the copy, -1 for none
	words  []uint64   // the copied rows' sign bits
	rowids []byte     // their rowids, as a chunk holds them
	has    []byte     // the copied rows that still have their vectors, a bit each
	// lists is where each cluster's rows begin in the copy (a multiple of
	// eight: padding rows without vectors fill the gaps), and lists[c] the
	// copy's end; cent the clusters' centroids, ix.nw words each. nil: the
	// copy is in the index's order, and read whole (clusters.go).
	lists []int
	cent  []uint64
	// centF is each cluster's mean, its rows read by their two bits a
	// dimension (twoBitCosine), of unit norm, dim floats each: a query's
	// clusters are the nearest by those (probe)
	centF []float32
	views map[string]*layoutView
	// scratch is the scan's distances, kept for the next (signIndex.scratch)
	scratch []uint16
	free    func() // gives back the memory of words to pos, once
}

// layoutView is the copy as a filter sees it: the rows it admits that
// have vectors (a bit each, in the copy's order), and the set of the rows
// it admitted when they were marked, for the next scan to mark only what
// changed.
type layoutView struct {
	set   []uint64
	valid []byte
}

// layoutChunk is how many rows a chunk of a layout holds: sqlite-vec's
// chunk size, so that hamming parts a scan of it as it parts the index's.
const layoutChunk = 1024

// layoutMin is the fewest rows an index holds for a vector lane to rank
// among the rows its filter admits, and for a long-lived process to lay
// out the rows not archived (a variable for tests).
var layoutMin = 100_000

// layoutViews is how many filters' views a layout keeps: a prompt's, a
// search's, a near-duplicate check's, never many.
const layoutViews = 8

// layOut copies the sign bits of the rows of ix's chunks but the newest
// that live holds and that have vectors, inClusters (arrange) if they are
// many.
func layOut(ix *signIndex, live []uint64, inClusters bool) *liveLayout {
	upTo := max(len(ix.chunks)-1, 0)
	lay := &liveLayout{ix: ix, upTo: upTo, valid: make([][]byte, upTo), views: map[string]*layoutView{}}
	var refs []uint32 // the rows copied, in the index's order
	for ci := range upTo {
		ch := &ix.chunks[ci]
		lay.valid[ci] = ch.valid
		for i := range len(ch.rowids) / 8 {
			if ch.holds(i) && has(live, ch.rowid(i)) {
				refs = append(refs, placeOf(ci, i))
			}
		}
	}
	lay.held = len(refs)
	at := lay.arrange(refs, inClusters)
	nw := ix.nw
	lay.alloc(lay.n, len(ix.at))
	hugePages(lay.words)
	for j, ref := range refs {
		ci, i := splitPlace(ref)
		ch, r := &ix.chunks[ci], int(at[j])
		copy(lay.words[r*nw:(r+1)*nw], ch.words[i*nw:(i+1)*nw])
		copy(lay.rowids[8*r:8*r+8], ch.rowids[8*i:8*i+8])
		lay.has[r/8] |= 1 << (r % 8)
		lay.refs[r], lay.pos[ch.rowid(i)] = ref, int32(r)
	}
	return lay
}

// arrange returns the row of the copy each of refs (places in the index)
// takes, and sets the copy's size: in the index's order, or, inClusters
// for clusterMin rows or more, by cluster (lists, cent), each cluster's
// rows in the index's order.
func (lay *liveLayout) arrange(refs []uint32, inClusters bool) []int32 {
	if !inClusters || len(refs) < clusterMin {
		at := make([]int32, len(refs))
		for j := range at {
			at[j] = int32(j)
		}
		lay.n = len(refs)
		return at
	}
	ix, nw := lay.ix, lay.ix.nw
	// the rows fitted to, evenly spaced
	picks := make([]int, min(trainRows, len(refs)))
	sample := make([]uint64, len(picks)*nw)
	for j := range picks {
		picks[j] = j * len(refs) / len(picks)
		ci, i := splitPlace(refs[picks[j]])
		copy(sample[j*nw:(j+1)*nw], ix.chunks[ci].words[i*nw:(i+1)*nw])
	}
	lay.cent = fitCentroids(sample, nw, max(1, len(refs)/clusterRows), trainRounds)
	c := len(lay.cent) / nw
	at := assign(ix, refs, lay.cent) // each ref's cluster, then its row
	sizes := make([]int, c)
	for _, k := range at {
		sizes[k]++
	}
	lay.lists = make([]int, c+1)
	for k := range c {
		lay.lists[k+1] = lay.lists[k] + (sizes[k]+7)&^7
	}
	lay.n = lay.lists[c]
	lay.centF = meanTwoBits(ix, refs, at, c, picks)
	next := slices.Clone(lay.lists[:c])
	for j, k := range at {
		at[j] = int32(next[k])
		next[k]++
	}
	return at
}

// alloc gives the layout room for n rows and for the rows of rowids below
// ids (pos, each -1), mapped apart from Go's heap (offheap): 51 MB at a
// million entries that on the heap would count toward the garbage
// collector's target as many times over as GOGC says. The room is given
// back when the layout is retired and no scan can read it (freeRetired),
// or else once the layout is unreachable.
func (lay *liveLayout) alloc(n, ids int) {
	nw := lay.ix.nw
	wordBytes, rowidBytes, refBytes := 8*n*nw, 8*n, 4*n
	mem, free := apart(lay, wordBytes+rowidBytes+refBytes+4*ids)
	lay.free = free
	lay.words = words(mem, 0, n*nw)
	lay.rowids = mem[wordBytes : wordBytes+rowidBytes : wordBytes+rowidBytes]
	if n > 0 {
		lay.refs = unsafe.Slice((*uint32)(unsafe.Pointer(&mem[wordBytes+rowidBytes])), n)
	}
	if ids > 0 {
		lay.pos = unsafe.Slice((*int32)(unsafe.Pointer(&mem[wordBytes+rowidBytes+refBytes])), ids)
	}
	for i := range lay.pos {
		lay.pos[i] = -1
	}
	lay.has = make([]byte, (n+7)/8)
}

// fits reports whether the layout still serves ix: it was made of ix,
// and the chunks read after it that one made now would copy hold few
// rows (an eighth of its own, layoutSlack). It follows the rows that
// lost their vectors since.
func (lay *liveLayout) fits(ix *signIndex) bool {
	if lay.ix != ix || ix.unplaced || lay.upTo > len(ix.chunks) {
		return false
	}
	// the rows a layout made now would add (all but the newest chunk's)
	if more := ix.rowsBefore(len(ix.chunks)-1) - ix.rowsBefore(lay.upTo); more*layoutSlack > lay.held {
		return false
	}
	lay.follow()
	return true
}

// layoutSlack: a layout is made again once the rows of the chunks read
// after it, but the newest, number more than an eighth of those it holds.
const layoutSlack = 8

// follow clears the copied rows whose slots in ix lost their vectors
// since (a deleted entry, or one whose text changed: its new vector lies
// in a newer chunk), in the copy and in every view.
func (lay *liveLayout) follow() {
	for ci := range lay.upTo {
		now := lay.ix.chunks[ci].valid
		if len(now) > 0 && len(lay.valid[ci]) > 0 && &now[0] == &lay.valid[ci][0] {
			continue // the same bytes (revalidate reads each chunk's afresh)
		}
		if slices.Equal(now, lay.valid[ci]) {
			lay.valid[ci] = now
			continue
		}
		// the slots that lost their vectors, and the rows copied of them
		ch, was := &lay.ix.chunks[ci], lay.valid[ci]
		for b := range min(len(was), len(now)) {
			for x := was[b] &^ now[b]; x != 0; x &= x - 1 {
				i := 8*b + bits.TrailingZeros8(x)
				id := ch.rowid(i)
				if id < 0 || id >= int64(len(lay.pos)) || lay.pos[id] < 0 || lay.refs[lay.pos[id]] != placeOf(ci, i) {
					continue // not copied
				}
				r := lay.pos[id]
				lay.has[r/8] &^= 1 << (r % 8)
				for _, v := range lay.views {
					v.valid[r/8] &^= 1 << (r % 8)
				}
			}
		}
		lay.valid[ci] = now
	}
}

// view returns the copy as the filter keyed key, whose set of admitted
// rows is set, sees it, marking what changed in set since the last; false
// when a row set admits lies in a chunk laid out without it (back from
// the archive): the layout must be made again.
func (lay *liveLayout) view(key string, set []uint64) (*layoutView, bool) {
	v := lay.views[key]
	if v == nil {
		if len(lay.views) >= layoutViews {
			clear(lay.views)
		}
		v = &layoutView{valid: make([]byte, len(lay.has))}
		lay.views[key] = v
	}
	for wi := range max(len(set), len(v.set)) {
		var now, was uint64
		if wi < len(set) {
			now = set[wi]
		}
		if wi < len(v.set) {
			was = v.set[wi]
		}
		for w := now ^ was; w != 0; w &= w - 1 {
			id := wi*64 + bits.TrailingZeros64(w)
			r := int32(-1)
			if id < len(lay.pos) {
				r = lay.pos[id]
			}
			switch {
			case r >= 0 && now&(1<<(id%64)) != 0:
				v.valid[r/8] |= lay.has[r/8] & (1 << (r % 8))
			case r >= 0:
				v.valid[r/8] &^= 1 << (r % 8)
			case now&(1<<(id%64)) != 0 && lay.laidOutWithout(id):
				delete(lay.views, key)
				return nil, false
			}
		}
	}
	v.set = append(v.set[:0], set...)
	return v, true
}

// laidOutWithout reports whether rowid id has a vector in a chunk the
// layout copied, without it.
func (lay *liveLayout) laidOutWithout(id int) bool {
	ix := lay.ix
	if id >= len(ix.at) || ix.at[id] == noSlot {
		return false
	}
	ci, slot := splitPlace(ix.at[id])
	return ci < lay.upTo && ix.chunks[ci].holds(slot)
}

// hamming is signIndex.hamming over the rows v admits among the copy and
// the rows set admits among the chunks after it, each found in ix's
// chunks and slots.
func (lay *liveLayout) hamming(q []float32, k int, v *layoutView, set []uint64, offer func(*signScan)) []signDist {
	qb := quantize(q)
	ix := lay.ix
	scan := &signIndex{width: ix.width, nw: ix.nw, scratch: lay.scratch, unplaced: true}
	nw := ix.nw
	ranges := [][2]int{{0, lay.n}}
	if lay.lists != nil {
		ranges = lay.probe(q, v, k)
	}
	var base []int // each chunk's first row in the copy
	for _, r := range ranges {
		for lo := r[0]; lo < r[1]; lo += layoutChunk {
			hi := min(lo+layoutChunk, r[1])
			scan.chunks = append(scan.chunks, signChunk{valid: v.valid[lo/8 : (hi+7)/8], rowids: lay.rowids[8*lo : 8*hi], words: lay.words[lo*nw : hi*nw]})
			base = append(base, lo)
		}
	}
	copied := len(scan.chunks)
	for _, ch := range ix.chunks[lay.upTo:] {
		// the rows the filter rejects marked as without vectors, as in
		// the copy: a scan without a set reads no rowid
		valid := slices.Clone(ch.valid)
		for i := range len(ch.rowids) / 8 {
			if ch.holds(i) && !has(set, ch.rowid(i)) {
				valid[i/8] &^= 1 << (i % 8)
			}
		}
		ch.valid = valid
		scan.chunks = append(scan.chunks, ch)
	}
	near := scan.hamming(qb, k, nil, offer, false)
	lay.scratch = scan.scratch
	for j := range near {
		if c := near[j].chunk; c < copied {
			ref := lay.refs[base[c]+near[j].slot]
			near[j].chunk, near[j].slot = splitPlace(ref)
		} else {
			near[j].chunk = c - copied + lay.upTo
		}
	}
	return near
}

// layoutFor returns the layout of the rows not archived and the view of
// the filter keyed key, whose set is set, for a scan of the index with a
// filter that leaves the archived out, made or followed now; nil when
// the cache holds no vectors, the index is small, or its rows cannot be
// placed.
func (c *Cache) layoutFor(ctx context.Context, key string, set []uint64) (*liveLayout, *layoutView, error) {
	for range 2 {
		lay, err := c.laidOut(ctx, false)
		if lay == nil || err != nil {
			return nil, nil, err
		}
		if v, ok := lay.view(key, set); ok {
			return lay, v, nil
		}
		c.retire() // a row back from the archive: laid out again
	}
	return nil, nil, nil
}

// laidOut returns the layout of the rows not archived, made or followed
// now; nil when the cache holds no vectors, the index is small, or its
// rows cannot be placed. One it makes is cut into clusters only
// inClusters: a search does not wait for that (0.3-0.5 s at a million
// entries), LoadIndex, ahead of searches, does it, again for a layout a
// search made in order.
func (c *Cache) laidOut(ctx context.Context, inClusters bool) (*liveLayout, error) {
	ix := c.signs
	if c.rows == nil || ix == nil || ix.unplaced || ix.rows() < layoutMin {
		c.retire()
		return nil, nil
	}
	if c.layout == nil || !c.layout.fits(ix) || inClusters && c.layout.lists == nil && c.layout.held >= clusterMin {
		c.retire()
		live, err := c.heldAdmits(ctx, liveOnly, nil)
		if err != nil || live == nil {
			return nil, err
		}
		c.layout = layOut(ix, live, inClusters)
	}
	return c.layout, nil
}

// relayIfBack brings the layout up to date (laidOut, in clusters) and,
// where a filter's view finds a row back from the archive in a chunk laid
// out without it, lays it out again now, ahead of the search that would.
func (c *Cache) relayIfBack(ctx context.Context) error {
	lay, err := c.laidOut(ctx, true)
	if lay == nil || err != nil {
		return err
	}
	if err := c.followRows(ctx); err != nil {
		return err
	}
	for key := range lay.views {
		s := c.rows.sets[key]
		if s == nil {
			continue // its set let go: the view is made again with it
		}
		if _, ok := lay.view(key, s.bits); !ok {
			c.retire()
			_, err := c.laidOut(ctx, true)
			return err
		}
	}
	return nil
}

// retire sets the layout aside: a lane of the search under way may still
// scan it. Its memory is given back before the next search plans its
// lanes (freeRetired), so that a process holds one layout, not one for
// each made until the garbage collector next runs.
func (c *Cache) retire() {
	if c.layout != nil {
		c.retired = append(c.retired, c.layout)
		c.layout = nil
	}
}

// freeRetired gives back the memory of the layouts set aside. It is
// called where no scan of them can be under way: before a search or a
// Nearest plans, and before the index is loaded ahead of them.
func (c *Cache) freeRetired() {
	for _, lay := range c.retired {
		lay.free()
	}
	c.retired = nil
}

// rows is how many slots the index's chunks hold.
func (ix *signIndex) rows() int { return ix.rowsBefore(len(ix.chunks)) }

// rowsBefore is how many slots its chunks before chunk ci hold.
func (ix *signIndex) rowsBefore(ci int) int {
	n := 0
	for _, ch := range ix.chunks[:ci] {
		n += len(ch.rowids) / 8
	}
	return n
}

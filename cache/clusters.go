package cache

import (
	"cmp"
	"math"
	"math/bits"
	"math/rand"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// A layout of the rows not archived (liveLayout) in order is read whole
// by every search's vector lane: at a million entries that is 43 MB,
// bound by memory's bandwidth, after the query's embedding. A large
// layout is therefore cut into clusters by its rows' sign bits, each
// cluster's rows side by side: k-means over the bits of a sample, with
// the bits' majority for a mean (fitCentroids), then every row to the
// centroid whose bits differ least from its own (assign: in C, on every
// core). A scan reads the clusters nearest the query, as its dot product
// with each cluster's mean of its rows' two bits a dimension orders them
// (probe), until it holds a third of the rows its filter admits
// (probeShare), and ranks those as the whole layout's are ranked.
//
// On a copy of the 1M bench repository (684k rows not archived, 168
// clusters, in process): recall@10 of the vector stage against exact
// search 0.972-0.988 over 40 tmux commit subjects (three fits; 0.952
// with a fourth, after 15 rows changed: one query's ten nearest all lay
// in a cluster ordered past the first third), 0.982 over 40 others and
// 0.983 over 30 more, against 0.997, 1.000 and 1.000 reading every row;
// reading a quarter, 0.948-0.980. The stage took 1.4 ms against 3.1-3.6, and cutting the
// layout 0.43 s against 0.03 s in order, which a search does not wait
// for (laidOut). An earlier try of coarse lists ordered the clusters by
// their mean of ±1 signs and assigned rows in Go (6 s): 0.940 reading a
// third. A command without the warm process reads every row.

// clusterMin is the fewest rows a layout holds to be cut into clusters (a
// variable for tests).
var clusterMin = 200_000

// clusterRows is about how many rows a cluster holds: 168 clusters at the
// 1M bench repository's 684k rows not archived (2,048: recall@10 0.982
// against 0.975 reading a quarter, for twice the time to assign).
var clusterRows = 4096

// trainRows is how many of the layout's rows, evenly spaced, the
// centroids are fitted to, in trainRounds rounds (variables for the
// evaluation's runs).
var (
	trainRows   = 32_768
	trainRounds = 6
)

// probeShare is the share of the admitted rows a clustered scan reads at
// least (1/probeShare of them), and probeK how many times the rows it
// keeps (rerankPool times the pool), for a filter that admits few
// (variables for tests).
var (
	probeShare = 3
	probeK     = 16
)

// fitCentroids returns c centroids (nw words each) for the rows of
// sample, by rounds of k-majority: each row goes to the centroid its bits
// differ least from, and a centroid's bit is then set where most of its
// rows' are. The first centroids are rows picked as k-means++ does (seedRows);
// one that loses all its rows keeps its bits.
func fitCentroids(sample []uint64, nw, c, rounds int) []uint64 {
	s := len(sample) / nw
	if s == 0 || c <= 0 {
		return nil
	}
	c = min(c, s)
	cent := seedRows(sample, nw, c)
	ones := make([]int32, c*nw*64)
	sizes := make([]int32, c)
	slots := make([]int32, s)
	for i := range slots {
		slots[i] = int32(i)
	}
	of := make([]int32, s)
	for range rounds {
		nearestCentroids(sample, nw, slots, cent, of)
		clear(ones)
		clear(sizes)
		for i := range s {
			row, j := sample[i*nw:(i+1)*nw], int(of[i])
			sizes[j]++
			at := ones[j*nw*64 : (j+1)*nw*64]
			for w, x := range row {
				for ; x != 0; x &= x - 1 {
					at[w*64+bits.TrailingZeros64(x)]++
				}
			}
		}
		for j := range c {
			if sizes[j] == 0 {
				continue
			}
			for w := range nw {
				var x uint64
				for b, n := range ones[(j*nw+w)*64 : (j*nw+w+1)*64] {
					if 2*n > sizes[j] {
						x |= 1 << b
					}
				}
				cent[j*nw+w] = x
			}
		}
	}
	return cent
}

// seedRows returns c rows of sample (nw words each) for first centroids,
// as k-means++ picks them among seedFrom rows drawn from it: the first at
// random, each next one with a chance that grows as the square of its
// distance from the nearest picked. The draws are seeded: every process
// picks the same rows of the same sample.
func seedRows(sample []uint64, nw, c int) []uint64 {
	rng := rand.New(rand.NewSource(1))
	s := len(sample) / nw
	from := rng.Perm(s)[:min(s, max(seedFrom, c))]
	cent := make([]uint64, 0, c*nw)
	least := make([]float64, len(from)) // each row's squared distance from the nearest picked
	for i := range least {
		least[i] = math.Inf(1)
	}
	pick := from[0]
	for len(cent) < c*nw {
		row := sample[pick*nw : (pick+1)*nw]
		cent = append(cent, row...)
		total := 0.0
		for i, r := range from {
			d := bitsApart(sample[r*nw:(r+1)*nw], row)
			least[i] = min(least[i], float64(d*d))
			total += least[i]
		}
		if total == 0 {
			pick = from[len(cent)/nw%len(from)] // every row is a centroid's: any will do
			continue
		}
		at := rng.Float64() * total
		for i, r := range from {
			if at -= least[i]; at < 0 || i == len(from)-1 {
				pick = r
				break
			}
		}
	}
	return cent
}

// seedFrom is how many rows seedRows picks among.
const seedFrom = 4096

// nearestCentroid returns the centroid of cent (len(row) words each)
// whose bits differ least from row's, the first of those that tie.
func nearestCentroid(cent, row []uint64) int {
	nw := len(row)
	best, at := 1<<30, 0
	for j := 0; j+nw <= len(cent); j += nw {
		if d := bitsApart(row, cent[j:j+nw]); d < best {
			best, at = d, j/nw
		}
	}
	return at
}

// probe returns the row ranges [lo, hi) of the layout's clusters a scan
// for query q reads, in the layout's order: the clusters whose means
// (centF) have the largest dot products with q, the first of two that
// tie, until they hold the rows wanted of those view admits (probeShare;
// probeK for k rows kept).
func (lay *liveLayout) probe(q []float32, v *layoutView, k int) [][2]int {
	c := len(lay.lists) - 1
	dim := len(lay.centF) / max(c, 1)
	admitted := make([]int, c)
	total := 0
	for j := range c {
		for _, b := range v.valid[lay.lists[j]/8 : lay.lists[j+1]/8] {
			admitted[j] += bits.OnesCount8(b)
		}
		total += admitted[j]
	}
	want := max(total/probeShare, probeK*k)
	order := make([]int, c)
	dots := make([]float32, c)
	for j := range c {
		order[j] = j
		if len(q) <= dim { // dim: the bits a row holds, the query's dimensions and any padding
			dots[j] = dot(q, lay.centF[j*dim:j*dim+len(q)])
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(dots[b], dots[a]) })
	got := 0
	for i, j := range order {
		if got >= want {
			order = order[:i]
			break
		}
		got += admitted[j]
	}
	slices.Sort(order)
	ranges := make([][2]int, 0, len(order))
	for _, j := range order {
		if lo, hi := lay.lists[j], lay.lists[j+1]; hi > lo {
			ranges = append(ranges, [2]int{lo, hi})
		}
	}
	return ranges
}

// meanTwoBits returns the mean of each of c clusters' rows, as their two
// bits a dimension read them (magWeight), of unit norm: over the refs at
// picks, of[j] the cluster of refs[j].
func meanTwoBits(ix *signIndex, refs []uint32, of []int32, c int, picks []int) []float32 {
	dim := 8 * ix.width
	sum := make([]float32, c*dim)
	for _, at := range picks {
		ci, i := splitPlace(refs[at])
		ch := &ix.chunks[ci]
		signs, mags := ch.words[i*ix.nw:(i+1)*ix.nw], ch.mags[i*ix.nw:(i+1)*ix.nw]
		out := sum[int(of[at])*dim : int(of[at]+1)*dim]
		for d := range dim {
			x := float32(1)
			if mags[d/64]>>(d%64)&1 != 0 {
				x = magWeight
			}
			if signs[d/64]>>(d%64)&1 == 0 {
				x = -x
			}
			out[d] += x
		}
	}
	for k := range c {
		v := sum[k*dim : (k+1)*dim]
		if n := math.Sqrt(float64(dot(v, v))); n > 0 {
			for d := range v {
				v[d] /= float32(n)
			}
		}
	}
	return sum
}

// nearestCentroids writes into out[i] the centroid of cent nearest the
// row at words[nw*slots[i]:] (nearestCentroid), in C where it can.
func nearestCentroids(words []uint64, nw int, slots []int32, cent []uint64, out []int32) {
	if hammingFast && nw == 8 {
		nearestCentroidsC(words, slots, cent, out)
		return
	}
	for i, s := range slots {
		out[i] = int32(nearestCentroid(cent, words[nw*int(s):nw*int(s)+nw]))
	}
}

// assign returns the centroid of cent nearest each of refs (places in
// ix, in its order), on a goroutine a core (four at most), each taking
// the refs of one chunk at a time; it returns once all are done.
func assign(ix *signIndex, refs []uint32, cent []uint64) []int32 {
	of := make([]int32, len(refs))
	slots := make([]int32, len(refs))
	var runs []int // where each chunk's refs begin
	last := -1
	for j, ref := range refs {
		ci, slot := splitPlace(ref)
		slots[j] = int32(slot)
		if ci != last {
			runs, last = append(runs, j), ci
		}
	}
	runs = append(runs, len(refs))
	var next atomic.Int64
	work := func() {
		for {
			r := int(next.Add(1) - 1)
			if r >= len(runs)-1 {
				return
			}
			lo, hi := runs[r], runs[r+1]
			ci, _ := splitPlace(refs[lo])
			nearestCentroids(ix.chunks[ci].words, ix.nw, slots[lo:hi], cent, of[lo:hi])
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), 4) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	return of
}

package cache

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

// A layout of many rows is cut into clusters, and a scan reads the
// clusters nearest the query, a share of the rows, not all of them: the
// query's nearest rows, which lie in its cluster, are still the vector
// lane's first, as a scan of every cluster finds them.
func TestClusteredLayoutReadsTheNearestClusters(t *testing.T) {
	defer func(n, c, r, k int) { layoutMin, clusterMin, clusterRows, probeK = n, c, r, k }(layoutMin, clusterMin, clusterRows, probeK)
	layoutMin, clusterMin, clusterRows, probeK = 0, 0, 500, 1
	share := probeShare
	defer func() { probeShare = share }()
	ctx := context.Background()
	c, h := heldPair(t)
	rng := rand.New(rand.NewSource(3))
	// 12 clusters of 16 dimensions: rows near a centre each
	centres := make([][]float32, 12)
	for i := range centres {
		centres[i] = randomVector(rng)
	}
	near := func(centre []float32, spread float32) []float32 {
		v := slices.Clone(centre)
		for d := range v {
			v[d] += spread * (rng.Float32() - 0.5)
		}
		return v
	}
	var entries []memory.Entry
	for i := range 12_000 {
		entries = append(entries, mk(memory.TypeInsight, fmt.Sprintf("entry %d", i), time.Duration(i)*time.Second))
	}
	put(t, c, entries)
	var made [][]float32 // the rows' vectors
	for {
		if n, _ := c.PendingCount(ctx); n == 0 {
			break
		}
		embedRandom(t, "m@1", func() []float32 {
			v := near(centres[rng.Intn(len(centres))], 0.2)
			made = append(made, v)
			return v
		}, c, h)
	}
	// a search lays the rows out in order, not waiting for clusters;
	// LoadIndex, ahead of the next, cuts them into clusters
	if _, err := h.Nearest(ctx, near(centres[0], 0.1), Filter{}, 10); err != nil {
		t.Fatal(err)
	}
	if h.layout == nil || h.layout.lists != nil {
		t.Fatalf("a search's layout: %v, want one in order", h.layout)
	}
	if err := h.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	lay := h.layout
	if lay == nil || len(lay.lists) < 5 {
		t.Fatalf("the layout of 12,000 rows is not in clusters (%v)", lay)
	}
	for i := range 10 {
		q := near(made[i*997], 0.01)
		got, err := h.Nearest(ctx, q, Filter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		probeShare = 1
		whole, err := h.Nearest(ctx, q, Filter{}, 10)
		probeShare = share
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 10 || !slices.Equal(hitIDs(got), hitIDs(whole)) {
			t.Fatalf("query %d: the clusters read found %v, all of them %v", i, hitIDs(got), hitIDs(whole))
		}
		read := 0
		for _, r := range lay.probe(q, lay.views[firstKey(lay.views)], nearestPool(10)*rerankPool) {
			read += r[1] - r[0]
		}
		if read > lay.n/2 || read < lay.held/probeShare {
			t.Fatalf("query %d: read %d rows of %d, want from a %dth to half", i, read, lay.n, probeShare)
		}
	}
}

// firstKey is a key of views, the one filter's a test searched with.
func firstKey(views map[string]*layoutView) string {
	for k := range views {
		return k
	}
	return ""
}

// Rows drawn around a few centres are sorted by the centroids fitted to
// them as by their centres: every centre's rows go to one centroid, and
// no two centres share one.
func TestFitCentroidsFindsTheClusters(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	const nw, k, per = 8, 6, 300
	centres := make([]uint64, k*nw)
	for i := range centres {
		centres[i] = rng.Uint64()
	}
	var rows []uint64
	var from []int
	for i := range k * per {
		c := i % k
		for w := range nw {
			x := centres[c*nw+w]
			for range 3 { // a few bits flipped of 64
				x ^= 1 << rng.Intn(64)
			}
			rows = append(rows, x)
		}
		from = append(from, c)
	}
	cent := fitCentroids(rows, nw, k, 6)
	slots := make([]int32, k*per)
	for i := range slots {
		slots[i] = int32(i)
	}
	of := make([]int32, len(slots))
	nearestCentroids(rows, nw, slots, cent, of)
	to := map[int]int32{}
	for i, c := range from {
		if j, ok := to[c]; ok && j != of[i] {
			t.Fatalf("centre %d's rows went to centroids %d and %d", c, j, of[i])
		}
		to[c] = of[i]
	}
	seen := map[int32]bool{}
	for _, j := range to {
		if seen[j] {
			t.Fatalf("two centres share centroid %d: %v", j, to)
		}
		seen[j] = true
	}
}

// nearestCentroids finds, in Go and in C (POPCNT) where the CPU runs it,
// the centroid whose bits differ least from each row's, ties to the
// first.
func TestNearestCentroids(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	words := make([]uint64, 8*500)
	for i := range words {
		words[i] = rng.Uint64() & rng.Uint64() & rng.Uint64() // sparse bits: many ties
	}
	cent := slices.Clone(words[8*100 : 8*140])
	slots := make([]int32, 300)
	for i := range slots {
		slots[i] = int32(rng.Intn(500))
	}
	want := make([]int32, len(slots))
	ties := 0
	for i, s := range slots {
		best := 1 << 30
		for j := range 40 {
			d := 0
			for w := range 8 {
				d += bits.OnesCount64(words[8*int(s)+w] ^ cent[8*j+w])
			}
			if d == best {
				ties++
			}
			if d < best {
				best, want[i] = d, int32(j)
			}
		}
	}
	if ties == 0 {
		t.Fatal("no row lies as near two centroids: the ties are not tested")
	}
	for _, p := range hammingPaths() {
		t.Run(p.name, func(t *testing.T) {
			defer p.use()()
			got := make([]int32, len(slots))
			nearestCentroids(words, 8, slots, cent, got)
			if !slices.Equal(got, want) {
				t.Fatalf("nearest centroids %v, want %v", got, want)
			}
		})
	}
}

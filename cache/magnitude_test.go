package cache

import (
	"context"
	"math"
	"math/bits"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

// A row's magnitude bits mark the dimensions at least magCut times its
// root mean square, laid out as sign bits are.
func TestMagnitudeBitsMarkTheLargeDimensions(t *testing.T) {
	// rms of (2, -1, 0.1, -0.1, 0.5, 0, 0, 0, 1.5): sqrt(7.27/9) = 0.899;
	// the cut 0.606
	got := magnitudeBits(encodeVec([]float32{2, -1, 0.1, -0.1, 0.5, 0, 0, 0, 1.5}))
	if want := []byte{0b00000011, 0b00000001}; !slices.Equal(got, want) {
		t.Fatalf("magnitude bits %08b, want %08b", got, want)
	}
	// an embedding's components are about normal: about half are large
	rng := rand.New(rand.NewSource(1))
	v := make([]float32, 512)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	set := 0
	for _, b := range magnitudeBits(encodeVec(v)) {
		set += bits.OnesCount8(b)
	}
	if set < 200 || set > 312 {
		t.Fatalf("%d of 512 normal components marked large, want about half", set)
	}
}

// twoBitCosine is the cosine of q with the row read as ±magWeight where
// its magnitude bit is set and ±1 where it is not, to float32's
// precision, for widths with a tail byte past the last word.
func TestTwoBitCosineIsTheCosineOfTheBits(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, dim := range []int{8, 72, 512} {
		ix := &signIndex{width: dim / 8, nw: (dim/8 + 7) / 8}
		for range 50 {
			q, x := make([]float32, dim), make([]float32, dim)
			for i := range q {
				q[i], x[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			}
			signs, mags := make([]uint64, ix.nw), make([]uint64, ix.nw)
			ix.pack(signs, quantize(x))
			mb := magnitudeBits(encodeVec(x))
			ix.pack(mags, mb)
			var dot, norm float64
			for i := range q {
				w := 1.0
				if mb[i/8]&(1<<(i%8)) != 0 {
					w = magWeight
				}
				if x[i] <= 0 {
					w = -w
				}
				dot += float64(q[i]) * w
				norm += w * w
			}
			want := dot / math.Sqrt(norm)
			sum, total := byteSums(q)
			if got := float64(twoBitCosine(sum, total, dim, signs, mags)); math.Abs(got-want) > 1e-4*(1+math.Abs(want)) {
				t.Fatalf("dim %d: twoBitCosine %v, want %v", dim, got, want)
			}
		}
	}
}

// Rows whose signs all agree with the query's are told apart by their
// magnitudes: the one whose large dimensions are the query's large ones
// ranks first, as its float vector does.
func TestMagnitudesOrderRowsTheSignsTie(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	const dim = 16
	put(t, c, []memory.Entry{mk(memory.TypeInsight, "far in magnitude", time.Hour), mk(memory.TypeInsight, "near in magnitude", time.Hour)})
	if err := c.UseModel(ctx, "m@1", dim); err != nil {
		t.Fatal(err)
	}
	pending, _, err := c.PendingVectors(ctx, 10)
	if err != nil || len(pending) != 2 {
		t.Fatalf("%d pending, %v", len(pending), err)
	}
	q, far, near := make([]float32, dim), make([]float32, dim), make([]float32, dim)
	for i := range q {
		q[i], far[i], near[i] = 0.1, 1, 0.1
		if i < dim/2 {
			q[i], far[i], near[i] = 1, 0.1, 1
		}
	}
	vecs := [][]float32{far, near}
	if pending[0].Text != "far in magnitude" {
		vecs[0], vecs[1] = near, far
	}
	if err := c.StoreVectors(ctx, pending, vecs); err != nil {
		t.Fatal(err)
	}
	if err := c.loadSigns(ctx); err != nil {
		t.Fatal(err)
	}
	ranked := c.signs.nearest(q, 1, nil, nil, false)
	hits, err := c.Nearest(ctx, q, Filter{}, 2)
	if err != nil || len(ranked) != 2 || len(hits) != 2 || hits[0].Content != "near in magnitude" {
		t.Fatalf("ranked %v, hits %v (%v)", ranked, hits, err)
	}
	var first int64
	if err := c.db.QueryRowContext(ctx, `SELECT rowid FROM entries WHERE content = 'near in magnitude'`).Scan(&first); err != nil || ranked[0] != first {
		t.Fatalf("ranked %v, want rowid %d first (%v)", ranked, first, err)
	}
}

// On vectors that gather in dense clusters of near-equals (harder than
// an embedded memory: the vector stage's recall@10 there is 0.993 at a
// million entries), the vector stage finds most of exact search's ten
// nearest while it scores only exactPool of its candidates by their
// float vectors: 0.845, where ranking them by the signs alone finds
// 0.652, and scoring 200 exactly 1.000. Every row's magnitude bits are
// its newest vector's.
func TestTheVectorStageFindsTheNearestWithFewExactScores(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	const dim, n, clusters = 128, 12000, 60
	rng := rand.New(rand.NewSource(3))
	centres := make([][]float32, clusters)
	for i := range centres {
		centres[i] = make([]float32, dim)
		for j := range centres[i] {
			centres[i][j] = float32(rng.NormFloat64())
		}
	}
	near := func(spread float64) []float32 {
		ctr := centres[rng.Intn(clusters)]
		v := make([]float32, dim)
		for j := range v {
			v[j] = ctr[j] + float32(spread*rng.NormFloat64())
		}
		return v
	}
	pending := waitingEntries(t, c, n, dim)
	vecs := make([][]float32, n)
	newest := map[int64][]float32{}
	for i := range vecs {
		vecs[i] = near(1)
		newest[pending[i].RowID] = vecs[i]
	}
	if err := c.StoreVectors(ctx, pending, vecs); err != nil {
		t.Fatal(err)
	}
	// replaced, as after their texts change: cleared in their chunks,
	// written to the newest
	if _, err := c.db.ExecContext(ctx, `UPDATE entries SET content = content || ' again' WHERE rowid IN (SELECT rowid FROM entries ORDER BY rowid LIMIT 500)`); err != nil {
		t.Fatal(err)
	}
	again, _, err := c.PendingVectors(ctx, n)
	if err != nil || len(again) != 500 {
		t.Fatalf("%d waiting again, %v", len(again), err)
	}
	for i, p := range again {
		vecs[i] = near(1)
		newest[p.RowID] = vecs[i]
	}
	if err := c.StoreVectors(ctx, again, vecs[:len(again)]); err != nil {
		t.Fatal(err)
	}
	if err := c.loadSigns(ctx); err != nil {
		t.Fatal(err)
	}
	ix := c.signs
	for row, v := range newest {
		at := ix.at[row]
		ch, slot := &ix.chunks[at>>slotBits], int(at&(1<<slotBits-1))
		got := ch.mags[slot*ix.nw : (slot+1)*ix.nw]
		want := make([]uint64, ix.nw)
		ix.pack(want, magnitudeBits(encodeVec(v)))
		if !slices.Equal(got, want) {
			t.Fatalf("rowid %d: magnitude bits %x, its vector's %x", row, got, want)
		}
	}
	var recall float64
	const queries = 40
	for range queries {
		q := near(1)
		exact, err := c.NearestExact(ctx, q, Filter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Nearest(ctx, q, Filter{}, 20)
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, h := range got[:min(10, len(got))] {
			found[h.ID] = true
		}
		for _, h := range exact {
			if found[h.ID] {
				recall += 1.0 / float64(len(exact)*queries)
			}
		}
	}
	if recall < 0.8 {
		t.Fatalf("recall@10 of the vector stage %.3f, want at least 0.8", recall)
	}
	t.Logf("recall@10 %.3f scoring %d of %d candidates exactly", recall, exactPool(20), nearestPool(20))
}

package cache

import (
	"context"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

// The sign and magnitude bits of a whole read land in one slab (slabFor),
// those read after it in chunks of their own, and either way every chunk
// holds what a read without a slab gives, before and after a write to the
// newest chunk.
func TestSignsReadIntoASlabAsWithout(t *testing.T) {
	defer func(m int64) { slabMin = m }(slabMin)
	ctx := context.Background()
	const n, dim = 2*1024 + 100, 16
	rng := rand.New(rand.NewSource(7))
	c, _ := newCache(t)
	store := func(pending []PendingText) {
		t.Helper()
		vs := make([][]float32, len(pending))
		for i := range vs {
			vs[i] = make([]float32, dim)
			for j := range vs[i] {
				vs[i][j] = float32(rng.NormFloat64())
			}
		}
		if err := c.StoreVectors(ctx, pending, vs); err != nil {
			t.Fatal(err)
		}
	}
	store(waitingEntries(t, c, n, dim))
	read := func(min int64) *signIndex {
		t.Helper()
		slabMin = min
		if err := c.loadSigns(ctx); err != nil {
			t.Fatal(err)
		}
		return c.signs
	}
	same := func(when string, a, b *signIndex) {
		t.Helper()
		if len(a.chunks) != len(b.chunks) || len(a.chunks) < 3 {
			t.Fatalf("%s: %d chunks against %d", when, len(a.chunks), len(b.chunks))
		}
		for i := range a.chunks {
			if !slices.Equal(a.chunks[i].words, b.chunks[i].words) || !slices.Equal(a.chunks[i].mags, b.chunks[i].mags) || !slices.Equal(a.chunks[i].rowids, b.chunks[i].rowids) {
				t.Fatalf("%s: chunk %d differs", when, a.chunks[i].id)
			}
		}
	}
	c.signs = nil
	plain := read(1 << 62)
	c.signs = nil
	slabbed := read(1)
	same("read whole", plain, slabbed)
	for _, ch := range slabbed.chunks {
		if cap(ch.words) != len(ch.words) || cap(ch.mags) != len(ch.mags) {
			t.Fatalf("chunk %d's words may grow into the next's: len %d and %d, cap %d and %d", ch.id, len(ch.words), len(ch.mags), cap(ch.words), cap(ch.mags))
		}
	}
	put(t, c, []memory.Entry{mk(memory.TypeInsight, "entry added", time.Hour)})
	pending, _, err := c.PendingVectors(ctx, 10)
	if err != nil || len(pending) != 1 {
		t.Fatalf("%d waiting after a save (%v), want 1", len(pending), err)
	}
	store(pending)
	followed := read(1) // the newest chunk read again, on its own
	c.signs = nil
	same("after a write", read(1<<62), followed)
}

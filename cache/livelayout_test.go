package cache

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

// A long-lived cache ranks through its layout of the rows not archived
// (liveLayout) the very candidates a command ranks scanning the index with
// the filter's set, through archives, saves, edits, returns from the
// archive and deletes, for filters of several sets in turn; it keeps the
// layout while that serves, and makes it again when a row comes back from
// the archive. So does a layout in clusters whose scans read every
// cluster: its rows in another order, found through their places.
func TestLiveLayoutRanksAsTheIndex(t *testing.T) {
	t.Run("in order", func(t *testing.T) { ranksAsTheIndex(t, false) })
	t.Run("in clusters, all read", func(t *testing.T) { ranksAsTheIndex(t, true) })
}

func ranksAsTheIndex(t *testing.T, clustered bool) {
	defer func(n, c, r, p int) { layoutMin, clusterMin, clusterRows, probeShare = n, c, r, p }(layoutMin, clusterMin, clusterRows, probeShare)
	layoutMin = 0
	if clustered {
		clusterMin, clusterRows, probeShare = 0, 200, 1
	}
	ctx := context.Background()
	c, h := heldPair(t)
	rng := rand.New(rand.NewSource(17))
	var entries []memory.Entry
	for i := range 3000 {
		typ := []memory.Type{memory.TypeInsight, memory.TypeDecision, memory.TypeIssue, memory.TypeGitCommit}[i%4]
		entries = append(entries, mk(typ, fmt.Sprintf("entry %d", i), time.Duration(i)*time.Minute))
	}
	put(t, c, entries)
	vector := func() []float32 { return randomVector(rng) }
	embed := func() {
		t.Helper()
		for {
			if n, _ := c.PendingCount(ctx); n == 0 {
				return
			}
			embedRandom(t, "m@1", vector, c, h)
		}
	}
	var clock uint64 // each op after the last
	op := func(kind memory.OpKind, e memory.Entry) memory.Op {
		clock++
		return memory.Op{V: 1, ID: memory.NewID(), Entry: e.ID, Kind: kind, Clock: clock, At: time.Now().UTC()}
	}
	filters := []Filter{{}, {Types: []memory.Type{memory.TypeDecision, memory.TypeIssue}}, {IncludeArchived: true}}
	same := func(step string, laidOut bool) *liveLayout {
		t.Helper()
		for _, f := range filters {
			for _, n := range []int{30, 30, 4096} { // 4,096: every row ranked and scored
				q := vector()
				want, err := coarseIDs(ctx, c, q, n, f)
				if err != nil {
					t.Fatal(err)
				}
				got, err := coarseIDs(ctx, h, q, n, f)
				if err != nil {
					t.Fatal(err)
				}
				if len(want) == 0 || !slices.Equal(got, want) {
					t.Fatalf("%s, %+v: held ranks %v, the index %v", step, f, got, want)
				}
				// and every row the sign bits rank, in order, not only
				// those coarse scores
				if want, got := rankedIDs(t, c, q, n, f), rankedIDs(t, h, q, n, f); !slices.Equal(got, want) {
					t.Fatalf("%s, %+v: held ranks %d rows, the index %d (first %v… and %v…)", step, f, len(got), len(want), got[:min(5, len(got))], want[:min(5, len(want))])
				}
			}
		}
		if (h.layout != nil) != laidOut {
			t.Fatalf("%s: laid out %v, want %v", step, h.layout != nil, laidOut)
		}
		return h.layout
	}
	var gone []memory.Op // archived before the layout is made
	for _, e := range entries[1000:1100] {
		if e.Type != memory.TypeGitCommit {
			gone = append(gone, op(memory.OpArchive, e))
		}
	}
	put(t, c, nil, gone...)
	embed()
	if err := h.LoadIndex(ctx); err != nil { // laid out in clusters
		t.Fatal(err)
	}
	lay := same("first", true)
	if clustered != (len(lay.lists) > 2) {
		t.Fatalf("clustered %v, the layout holds %d clusters", clustered, len(lay.lists)-1)
	}
	// laidOut is the first entry of entries[from:to], not a commit, whose
	// vector lies in a chunk laid out
	laidOut := func(from, to int) int {
		t.Helper()
		for i := from; i < to; i++ {
			var row int64
			if err := c.db.QueryRow(`SELECT rowid FROM entries WHERE id = ?`, entries[i].ID).Scan(&row); err != nil {
				t.Fatal(err)
			}
			if p := h.signs.at[row]; entries[i].Type != memory.TypeGitCommit && p != noSlot && int(p>>slotBits) < lay.upTo {
				return i
			}
		}
		t.Fatalf("no entry of %d to %d lies in a chunk laid out", from, to)
		return -1
	}
	back, edited, deleted := laidOut(1000, 1100), laidOut(3, 1000), laidOut(1100, 3000) // not 1 and 2, archived below
	if n := lay.held; n <= layoutChunk {
		t.Fatalf("the layout holds %d rows, want more than a chunk", n)
	}
	// archived rows stay laid out, and the filter's set leaves them out
	put(t, c, nil, op(memory.OpArchive, entries[1]), op(memory.OpArchive, entries[2]))
	if same("after archives", true) != lay {
		t.Fatal("archives made the layout again")
	}
	// new entries and an edited text lie in newer chunks; the edited row's
	// old slot is cleared in the layout
	content := "an edited entry"
	edit := op(memory.OpEdit, entries[edited])
	edit.Content = &content
	put(t, c, []memory.Entry{mk(memory.TypeDecision, "a new decision", 0), mk(memory.TypeInsight, "a new insight", 0)}, edit)
	embed()
	if same("after saves and an edit", true) != lay {
		t.Fatal("saves made the layout again")
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.DeleteEntry(entries[deleted].ID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if same("after a delete", true) != lay {
		t.Fatal("a delete made the layout again")
	}
	// a row back from the archive, in a chunk laid out without it: the
	// layout is made again ahead of the next search (LoadIndex), or by it
	put(t, c, nil, op(memory.OpUnarchive, entries[back]))
	if err := h.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	again := h.layout
	if again == nil || again == lay {
		t.Fatalf("LoadIndex kept the layout that left out a row back from the archive (%v)", again)
	}
	if same("after a return from the archive", true) != again {
		t.Fatal("the layout made again ahead of the search was made again by it")
	}
	// another, that the search finds first
	lay = again
	put(t, c, nil, op(memory.OpUnarchive, entries[laidOut(back+1, 1100)]))
	if same("after another return, found by a search", true) == lay {
		t.Fatal("the layout left out a row back from the archive")
	}
	// a small index is scanned as it is
	layoutMin = 1 << 30
	h.layout = nil
	same("small", false)
}

// rankedIDs is the rows a vector lane ranks by their sign bits for k
// hits, in order.
func rankedIDs(t *testing.T, c *Cache, q []float32, k int, f Filter) []int64 {
	t.Helper()
	vq, err := c.planNearest(context.Background(), f, k, nearestPool(k), 0)
	if err != nil {
		t.Fatal(err)
	}
	vq.rank(q)
	return vq.ranked
}

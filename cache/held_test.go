package cache

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/notes"
)

// A cache that holds vectors in memory (a long-lived process's) ranks
// exactly as one that reads them from the store every time (a command's):
// the same ids, order and scores, with room for only a few vectors (so
// that it lets go of some), after memory changes, and after the model
// changes under it. The first also holds the lexicon, as the warm process
// does (BM25 from memory, the BM25 candidates' vectors read ahead).
func TestHeldVectorsRankAsTheStore(t *testing.T) {
	ctx := context.Background()
	c, p := newCache(t)
	// one with room for every vector, one for ten of them
	var held [2]*Cache
	for i, room := range []int{1000, 10} {
		x, _, err := Open(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		x.HoldVectors(room * 4 * 16) // 16 float32s a vector
		held[i] = x
	}
	held[0].HoldLexicon()
	rng := rand.New(rand.NewSource(7))
	words := []string{"retry", "backoff", "billing", "worker", "postgres", "migration", "redis", "timeout", "deploy", "cache"}
	var entries []notes.Entry
	for i := range 80 {
		typ := []notes.Type{notes.TypeInsight, notes.TypeDecision, notes.TypeIssue, notes.TypeGitCommit}[i%4]
		entries = append(entries, mk(typ, fmt.Sprintf("%s %s %s note %d", words[rng.Intn(10)], words[rng.Intn(10)], words[rng.Intn(10)], i), time.Duration(i)*time.Hour))
	}
	put(t, c, entries)
	vector := func() []float32 {
		v := make([]float32, 16)
		for i := range v {
			v[i] = rng.Float32() - 0.5
		}
		return v
	}
	store := func(model string) {
		t.Helper()
		for _, x := range []*Cache{c, held[0], held[1]} {
			if err := x.UseModel(ctx, model, 16); err != nil {
				t.Fatal(err)
			}
		}
		pending, _, err := c.PendingVectors(ctx, 1000)
		if err != nil {
			t.Fatal(err)
		}
		vecs := make([][]float32, len(pending))
		for i := range vecs {
			vecs[i] = vector()
		}
		if err := c.StoreVectors(ctx, pending, vecs); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	same := func(step string) {
		t.Helper()
		for i, text := range []string{"retry backoff", "postgres migration timeout", "billing", "deploy cache worker"} {
			q := SemanticQuery{Text: text, Vector: vector(), Mode: ModeHybrid, Weights: true, Now: now, MinCosine: 0.1}
			f := Filter{Limit: 20}
			if i%2 == 1 {
				f.Types = []notes.Type{notes.TypeDecision, notes.TypeGitCommit}
			}
			want, err := c.SemanticSearch(ctx, q, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range held {
				got, err := h.SemanticSearch(ctx, q, f)
				if err != nil {
					t.Fatal(err)
				}
				if len(want) == 0 || len(got) != len(want) {
					t.Fatalf("%s, %q: %d hits held, %d from the store", step, text, len(got), len(want))
				}
				byID := map[string]Hit{}
				for _, w := range want {
					byID[w.ID] = w
				}
				for _, g := range got {
					if w, ok := byID[g.ID]; ok && (w.Cosine != g.Cosine || w.BM25 != g.BM25 || w.Weight != g.Weight || w.Fused != g.Fused) {
						t.Logf("%s %q %s: cos %v/%v bm25 %v/%v weight %v/%v fused %v/%v vr %d/%d lr %d/%d", step, text, g.ID, g.Cosine, w.Cosine, g.BM25, w.BM25, g.Weight, w.Weight, g.Fused, w.Fused, g.VecRank, w.VecRank, g.LexRank, w.LexRank)
					}
				}
				for j := range want {
					if got[j].ID != want[j].ID || got[j].Score != want[j].Score || got[j].Cosine != want[j].Cosine {
						t.Fatalf("%s, %q, hit %d: held %s %v/%v, store %s %v/%v", step, text, j, got[j].ID, got[j].Score, got[j].Cosine, want[j].ID, want[j].Score, want[j].Cosine)
					}
				}
			}
		}
		if n := len(held[0].held.byKey); n < 40 {
			t.Fatalf("%s: %d vectors held, want most of them", step, n)
		}
		if n := len(held[1].held.byKey); n == 0 || n > 10 {
			t.Fatalf("%s: %d vectors held in room for ten", step, n)
		}
	}
	store("m@1")
	if !held[0].WaitLexicon(ctx) {
		t.Fatal("the lexicon was not read")
	}
	same("first")
	put(t, c, []notes.Entry{mk(notes.TypeDecision, "retry billing worker with backoff", time.Minute)},
		notes.Op{V: 1, ID: notes.NewID(), Entry: entries[1].ID, Kind: notes.OpArchive, Clock: 1, At: time.Now().UTC()})
	store("m@1")
	same("after a save and an archive")
	store("m@2") // every vector again, other values
	same("after a model switch")
}

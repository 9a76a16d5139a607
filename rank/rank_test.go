package rank

import (
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/notes"
)

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestWeight(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var e notes.State
	e.Tier, e.Created = notes.TierLongterm, now.Add(-30*24*time.Hour)
	if w := Weight(e, 3, now); !near(w, 1.5*0.5*1.2) {
		t.Errorf("longterm, one half-life, 3 recalls: %f", w)
	}
	e.Pinned = true
	if w := Weight(e, 0, now); !near(w, 1.5*0.7) {
		t.Errorf("pinned does not decay: %f", w)
	}
	e.Tier, e.Pinned, e.Irrelevant = notes.TierEphemeral, false, true
	e.Created = now
	if w := Weight(e, 6, now); !near(w, 0.5*1.4*0.33) {
		t.Errorf("ephemeral irrelevant: %f", w)
	}
	e.Irrelevant, e.Relevance = false, 0.5
	if s := Lexical(-2, e); !near(s, 3) {
		t.Errorf("lexical score with feedback 0.5: %f", s)
	}
}

// Hybrid fusion normalises BM25 by the best candidate and mixes it half
// and half with the cosine; candidates the BM25 list missed get the
// cosine part only.
func TestFuse(t *testing.T) {
	f := NewFuser(Hybrid, true, []float64{-4, -2, 0})
	best := Scores{LexRank: 1, BM25: -4, Cosine: 0.2}
	f.Fuse(&best)
	vecOnly := Scores{BM25: -3, Cosine: 0.8}
	f.Fuse(&vecOnly)
	if !near(best.Fused, 0.5*1+0.5*0.2) || !near(vecOnly.Fused, 0.5*0.8) {
		t.Fatalf("hybrid: %f %f", best.Fused, vecOnly.Fused)
	}
	lex := Scores{BM25: -2}
	NewFuser(Hybrid, false, []float64{-4}).Fuse(&lex) // no query vector: lexical
	vec := Scores{Cosine: 0.7}
	NewFuser(Vector, true, nil).Fuse(&vec)
	if !near(lex.Fused, 0.5) || !near(vec.Fused, 0.7) {
		t.Fatalf("lexical %f, vector %f", lex.Fused, vec.Fused)
	}
}

// The best candidates lend to their session neighbours from the scores
// before any lending.
func TestLend(t *testing.T) {
	scores := map[string]*Scores{"q": {Fused: 1}, "a": {Fused: 0.1}, "p": {Fused: 0.5}}
	order := []string{"a", "p", "q"}
	if l := Lenders(order, func(id string) float64 { return scores[id].Fused }); len(l) != 3 || l[0] != "q" || l[2] != "a" {
		t.Fatalf("lenders: %v", l)
	}
	if got := Loans("q", "", "a"); len(got) != 1 || got[0] != (Loan{"q", "a", LendToNext}) {
		t.Fatalf("loans: %+v", got)
	}
	Lend(append(Loans("q", "p", "a"), Loans("a", "q", "")...), scores)
	if !near(scores["a"].Fused, 0.1+LendToNext*1) || !near(scores["p"].Fused, 0.5+LendToPrevious*1) || !near(scores["q"].Fused, 1+LendToPrevious*0.1) {
		t.Fatalf("after lending: a %f p %f q %f", scores["a"].Fused, scores["p"].Fused, scores["q"].Fused)
	}
}

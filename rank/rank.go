// Package rank is search's ranking policy: how BM25 and vector similarity
// fuse into one score, what session context lends, and how an entry's
// tier, age, recall and feedback weigh it. It is pure (scores in, scores
// out); the cache gathers the candidates and their raw scores.
package rank

import (
	"math"
	"sort"
	"time"

	"github.com/git-synaptic/git-synaptic/notes"
)

// Mode picks the rankers a search uses.
type Mode string

// Search modes.
const (
	Hybrid Mode = "hybrid" // BM25 and vectors, combined
	Vector Mode = "vector" // vectors only
	BM25   Mode = "bm25"   // full-text only (the lexical fallback)
)

// LexicalShare is BM25's share of a hybrid score: share × bm25/max(bm25)
// + (1 − share) × cosine, over the union of both top lists. Chosen on LoCoMo dev (make eval-locomo, all 997 questions, R@10):
// reciprocal rank fusion 0.597 (vectors weighted 0.3: 0.653); this convex
// combination with share 0.3 0.668, 0.4 0.667, 0.5 0.671, 0.7 0.653;
// BM25 alone 0.632, vectors alone 0.393.
const LexicalShare = 0.5

// Scores are a candidate's raw and ranked scores.
type Scores struct {
	LexRank int     // rank in the BM25 list (0: absent)
	BM25    float64 // SQLite FTS5's bm25(): lower is better
	Cosine  float64 // query and entry vectors
	Fused   float64 // the fused score, session context included
	Context float64 // the part of Fused lent by session neighbours
}

// Fuser turns raw scores into fused ones for one search.
type Fuser struct {
	mode       Mode
	haveVector bool
	maxL       float64 // the best -BM25 among the first candidates
}

// NewFuser fuses for a search in mode, with or without a query vector,
// normalising BM25 by the best of bm25s (the first candidates' raw
// scores).
func NewFuser(mode Mode, haveVector bool, bm25s []float64) Fuser {
	f := Fuser{mode: mode, haveVector: haveVector}
	for _, b := range bm25s {
		f.maxL = math.Max(f.maxL, -b)
	}
	return f
}

// Fuse sets s.Fused: the cosine for vector search, normalised BM25 for
// lexical search, their convex combination (LexicalShare) for hybrid.
func (f Fuser) Fuse(s *Scores) {
	switch {
	case f.mode == Vector:
		s.Fused = s.Cosine
	case f.mode == BM25 || !f.haveVector:
		s.Fused = -s.BM25 / math.Max(f.maxL, 1e-9)
	default:
		l := 0.0
		if s.LexRank > 0 && f.maxL > 0 {
			l = -s.BM25 / f.maxL
		}
		s.Fused = LexicalShare*l + (1-LexicalShare)*s.Cosine
	}
}

// Session context: in hybrid search each of the ContextSources best
// matches lends a share of its fused score to the entries saved just before
// and after it in the same session (which join the results if the filter
// lets them), so an answer ranks with the question it answers ("did the
// migration work?" / "yes, after the retry fix"). On LoCoMo (make
// eval-locomo, all questions) R@10 goes from 0.671 without it to about
// 0.77. Measured alternatives: the next entry gains more from a match than
// the previous one (every candidate lending 0.3 to the next only: 0.730;
// to the previous only: 0.688); lending from the best 5 / 10 / 50
// candidates: 0.765 / 0.767 / 0.746; shares 0.3 and 0.15: 0.753, 0.5 and
// 0.25: 0.767.
const (
	LendToNext     = 0.4 // share lent to the entry saved just after a match
	LendToPrevious = 0.2 // share lent to the entry saved just before it
	ContextSources = 10
)

// Lenders are the ids of the ContextSources candidates with the best
// fused scores (ties in order), which lend to their session neighbours.
func Lenders(order []string, fused func(id string) float64) []string {
	best := append([]string(nil), order...)
	sort.SliceStable(best, func(i, j int) bool { return fused(best[i]) > fused(best[j]) })
	return best[:min(ContextSources, len(best))]
}

// Loan is a share of one candidate's fused score lent to another.
type Loan struct {
	From, To string
	Share    float64
}

// Loans are what a lender lends to the entries saved just before and just
// after it in its session ("" when there is none).
func Loans(lender, before, after string) []Loan {
	var out []Loan
	for _, l := range []Loan{{lender, after, LendToNext}, {lender, before, LendToPrevious}} {
		if l.To != "" {
			out = append(out, l)
		}
	}
	return out
}

// Lend adds the loans to the candidates' Context, from the fused scores
// before any context, then adds each Context to its Fused.
func Lend(loans []Loan, scores map[string]*Scores) {
	for _, l := range loans {
		if to := scores[l.To]; to != nil {
			to.Context += l.Share * scores[l.From].Fused
		}
	}
	for _, s := range scores {
		s.Fused += s.Context
	}
}

// Weight is the seed designs' multiplier for a result: tier (longterm
// 1.5, working 1.0, ephemeral 0.5) × recency (half-life 30 days; pinned
// entries do not decay) × access confidence (0 → 0.7, 1-2 → 1.0, 3-5 →
// 1.2, 6+ → 1.4) × relevance feedback (1 + score; irrelevant 0.33).
func Weight(e notes.State, accesses int, now time.Time) float64 {
	w := 1.0
	switch e.Tier {
	case notes.TierLongterm:
		w = 1.5
	case notes.TierEphemeral:
		w = 0.5
	}
	if !e.Pinned {
		age := now.Sub(e.Created).Hours() / 24
		if age > 0 {
			w *= math.Pow(0.5, age/30)
		}
	}
	switch {
	case accesses == 0:
		w *= 0.7
	case accesses <= 2:
	case accesses <= 5:
		w *= 1.2
	default:
		w *= 1.4
	}
	if e.Irrelevant {
		return w * 0.33
	}
	return w * (1 + e.Relevance)
}

// Lexical is a BM25-only search's score of an entry: -bm25 (higher is
// better) times its relevance feedback (1 + score; irrelevant 0.33).
func Lexical(bm25 float64, e notes.State) float64 {
	if e.Irrelevant {
		return -bm25 * 0.33
	}
	return -bm25 * (1 + e.Relevance)
}

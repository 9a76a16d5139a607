// Package rank is search's ranking policy: how BM25 and vector similarity
// fuse into one score, what session context lends, and how an entry's
// tier, age, recall and feedback weigh it. It is pure (scores in, scores
// out); the cache gathers the candidates and their raw scores.
package rank

import (
	"math"
	"sort"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
	"github.com/git-synaptic/git-synaptic/timeexpr"
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
		s.Fused = LexicalShare*f.Lexical(*s) + (1-LexicalShare)*s.Cosine
	}
}

// Lexical is a candidate's normalised BM25 (0 when BM25 did not find it).
func (f Fuser) Lexical(s Scores) float64 {
	if s.LexRank == 0 || f.maxL <= 0 {
		return 0
	}
	return -s.BM25 / f.maxL
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

// Priors: what an entry's standing lends its score, whatever the query.
// The seed designs multiply relevance by tier (longterm 1.5, working 1,
// ephemeral 0.5) × recency (half-life 30 days) × access confidence (0 →
// 0.7 … 6+ → 1.4); over memory that spans months that buries relevance
// (a year-old entry weighs 1e-4, and the order among old memory is by
// date). Here each prior keeps the seeds' direction but is bounded, so
// that their product spans at most 2.3× for memory (feedback, a person's
// explicit word, aside): a strong match of any age outranks a weak recent
// one, and among comparable matches recent, trusted memory comes first.
//
// RecencyFloor was chosen on LoCoMo dev asked the day after each
// conversation (make eval-locomo, path search-day-after, categories 1-4,
// R@10), where the months of memory run from new to old and the questions
// ask of any of them: floor 0 (the seeds') 0.323, 0.25 0.533, 0.5 0.689,
// 0.75 0.732, 1 (no recency) 0.744. 0.75 keeps "newest first among equals"
// for 1.2 points. The tier and confidence priors span about as much as
// recency, so that none dominates the others.
const (
	RecencyHalfLife = 30 * 24 * time.Hour // time for recency to fall half-way to its floor
	RecencyFloor    = 0.75                // the recency prior of old memory
	// CommitPrior weighs indexed commits against memory: a commit message
	// must match three times as well as a memory entry to rank above it.
	// Commits are many and short, so BM25 scores a one-word match of a
	// commit message highest of all: on a clone of tmux/tmux, with every
	// entry embedded, a prior of 0.5 put "Add DECRPM test" (one shared
	// word) above a saved issue that answers "why is the sync test slow"
	// by meaning (cosine 0.48), and 1/3 puts it below.
	CommitPrior = 1.0 / 3
)

// Prior is an entry's standing as factors of its score; Weight is their
// product.
type Prior struct {
	Tier, Recency, Confidence, Feedback float64
	// Line is OffLinePrior for memory written on another branch's
	// unmerged work, else 1.
	Line float64
}

// OffLinePrior weighs memory written on commits HEAD does not contain
// (another branch's unmerged work): it may not hold here, so it ranks
// below memory of this line that answers as well, yet still above
// memory that answers much worse.
const OffLinePrior = 0.5

// Weight is the product of the priors.
func (p Prior) Weight() float64 { return p.Tier * p.Recency * p.Confidence * p.Feedback * p.Line }

// Priors are an entry's priors at now: tier (longterm 1.2, working 1,
// ephemeral 0.8; an indexed commit CommitPrior), recency (1 when new,
// falling to RecencyFloor; pinned entries do not age), confidence (times
// a person or agent opened the entry: 0 → 1, 1-2 → 1.05, 3-5 → 1.1, 6+
// → 1.15; appearing in search results does not count, so nothing ranks
// higher for having ranked high before) and relevance feedback (1 +
// score; irrelevant IrrelevantFeedback).
func Priors(e memory.State, reads int, now time.Time) Prior {
	p := Prior{Tier: 1, Recency: 1, Confidence: 1, Line: 1}
	switch {
	case e.Type == memory.TypeGitCommit:
		p.Tier = CommitPrior
	case e.Tier == memory.TierLongterm:
		p.Tier = 1.2
	case e.Tier == memory.TierEphemeral:
		p.Tier = 0.8
	}
	if age := now.Sub(e.Created); !e.Pinned && age > 0 {
		p.Recency = Recency(age)
	}
	switch {
	case reads == 0:
	case reads <= 2:
		p.Confidence = 1.05
	case reads <= 5:
		p.Confidence = 1.1
	default:
		p.Confidence = 1.15
	}
	p.Feedback = Feedback(e)
	return p
}

// IrrelevantFeedback is the feedback factor of an entry marked
// irrelevant: it ranks as if a third as good a match.
const IrrelevantFeedback = 0.33

// Feedback is an entry's relevance-feedback factor: 1 + its score, or
// IrrelevantFeedback when it is marked irrelevant. The cache's SQL ranks
// BM25 candidates with the same factor (cache.Search).
func Feedback(e memory.State) float64 {
	if e.Irrelevant {
		return IrrelevantFeedback
	}
	return 1 + e.Relevance
}

// Recency is the recency prior at an age: 1 when new, half-way to
// RecencyFloor after RecencyHalfLife, never below it.
func Recency(age time.Duration) float64 {
	return RecencyFloor + (1-RecencyFloor)*math.Pow(0.5, float64(age)/float64(RecencyHalfLife))
}

// Lexical is a BM25-only search's score of an entry: -bm25 (higher is
// better) times its relevance feedback (Feedback).
func Lexical(bm25 float64, e memory.State) float64 { return -bm25 * Feedback(e) }

// Time in queries. A query that names a time ("in August 2023", "last
// week") ranks an entry written in that span, or whose text refers to a
// moment in it ("yesterday I..." written the day after), TimeBoost times
// higher; a query asking for what is recent ("recently", "lately") ranks
// an entry up to RecentBoost times higher the newer it is (half of that
// after RecentHalfLife). Tuned on LoCoMo dev (make eval-locomo,
// categories 1-4, hybrid R@10): no time 0.732; TimeBoost 0.5, 1, 2, 4:
// 0.740, 0.747, 0.750, 0.748; RecentBoost 0, 0.5, 1: 0.748, 0.747, 0.747
// (kept at 0.5: neutral there, and "what changed recently" in a project
// means the newest).
const (
	TimeBoost      = 1.0
	RecentBoost    = 0.5
	RecentHalfLife = 30 * 24 * time.Hour
)

// TimeFactor is what the query's time span does to an entry's score: 1
// when the query names no time or the entry is outside it.
func TimeFactor(span *timeexpr.Span, created time.Time, content string, now time.Time) float64 {
	switch {
	case span == nil:
		return 1
	case span.Recent:
		age := max(now.Sub(created), 0)
		return 1 + RecentBoost*math.Pow(0.5, float64(age)/float64(RecentHalfLife))
	case span.Contains(created):
		return 1 + TimeBoost
	}
	for _, m := range timeexpr.Mentions(content, created) {
		if span.Overlaps(m) {
			return 1 + TimeBoost
		}
	}
	return 1
}

// TimeReach is how long after a span entries may still refer to it
// ("last week", "the other weekend"): search looks for candidates written
// up to then.
const TimeReach = 8 * 24 * time.Hour

// Ranked is what Order needs of a result: its final score, its
// normalised BM25 score times the same weights (0 when BM25 did not find
// it), and its id for ties.
type Ranked struct {
	Score, Lexical float64
	ID             string
}

// Order sorts results best first, except that the first place goes to
// the best lexical match when there is one. Session context and vectors
// find answers that do not share the question's words, and they order
// every other place; but a strong direct match must not be pushed down
// by an entry that only sits beside one. On LoCoMo dev (make eval-locomo,
// categories 1-4) hybrid R@1 went from 0.344 (0.316 before time in
// queries) to 0.370, BM25's, and MRR from 0.522 to 0.539; giving the
// first place to the best hybrid score before context instead gave R@1
// 0.368, and protecting 2 or 3 places scored no better.
func Order[T any](rs []T, key func(*T) Ranked) {
	better := func(a, b Ranked) bool {
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.ID < b.ID
	}
	sort.SliceStable(rs, func(i, j int) bool { return better(key(&rs[i]), key(&rs[j])) })
	top := -1
	for i := range rs {
		k := key(&rs[i])
		if k.Lexical > 0 && (top < 0 || k.Lexical > key(&rs[top]).Lexical) {
			top = i
		}
	}
	if top > 0 {
		first := rs[top]
		copy(rs[1:top+1], rs[:top])
		rs[0] = first
	}
}

package rank

import (
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
	"github.com/git-synaptic/git-synaptic/timeexpr"
)

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// The priors are bounded: old memory keeps three quarters of its weight,
// commits weigh half, reads and feedback scale within their ranges.
func TestPriors(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var e memory.State
	e.Type, e.Tier, e.Created = memory.TypeDecision, memory.TierLongterm, now.Add(-30*24*time.Hour)
	if p := Priors(e, 3, now); !near(p.Weight(), 1.2*0.875*1.1) {
		t.Errorf("longterm, one half-life, 3 reads: %+v", p)
	}
	e.Created = now.AddDate(-3, 0, 0)
	if p := Priors(e, 0, now); !near(p.Recency, RecencyFloor) || p.Weight() < 0.8 {
		t.Errorf("three years old: %+v (the floor is %v)", p, RecencyFloor)
	}
	e.Pinned = true
	if p := Priors(e, 0, now); !near(p.Weight(), 1.2) {
		t.Errorf("pinned does not age: %+v", p)
	}
	e.Tier, e.Pinned, e.Irrelevant = memory.TierEphemeral, false, true
	e.Created = now
	if p := Priors(e, 6, now); !near(p.Weight(), 0.8*1.15*0.33) {
		t.Errorf("ephemeral irrelevant: %+v", p)
	}
	e.Type, e.Tier, e.Irrelevant = memory.TypeGitCommit, memory.TierWorking, false
	if p := Priors(e, 0, now); !near(p.Weight(), CommitPrior) {
		t.Errorf("a new commit: %+v", p)
	}
	e.Type, e.Relevance = memory.TypeIssue, 0.5
	if s := Lexical(-2, e); !near(s, 3) {
		t.Errorf("lexical score with feedback 0.5: %f", s)
	}
	// recency falls monotonically to its floor
	prev := 1.0
	for _, days := range []int{1, 30, 90, 365, 3650} {
		r := Recency(time.Duration(days) * 24 * time.Hour)
		if r >= prev || r < RecencyFloor {
			t.Errorf("recency at %d days: %f (before: %f)", days, r, prev)
		}
		prev = r
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

// The best lexical match takes the first place; the rest go by score.
func TestOrder(t *testing.T) {
	rs := []Ranked{{Score: 0.9, Lexical: 0.2, ID: "context"}, {Score: 0.8, Lexical: 0.9, ID: "direct"}, {Score: 0.85, ID: "vector"}, {Score: 0.1, Lexical: 0.1, ID: "weak"}}
	Order(rs, func(r *Ranked) Ranked { return *r })
	var got []string
	for _, r := range rs {
		got = append(got, r.ID)
	}
	if strings.Join(got, " ") != "direct context vector weak" {
		t.Errorf("order %v", got)
	}
	vec := []Ranked{{Score: 0.2, ID: "b"}, {Score: 0.7, ID: "a"}, {Score: 0.2, ID: "a2"}}
	Order(vec, func(r *Ranked) Ranked { return *r })
	if vec[0].ID != "a" || vec[1].ID != "a2" || vec[2].ID != "b" {
		t.Errorf("without lexical matches, by score then id: %v", vec)
	}
	Order([]Ranked{}, func(r *Ranked) Ranked { return *r })
}

// An entry written in the query's span, or referring to it, gains
// TimeBoost; "recently" favours the newest.
func TestTimeFactor(t *testing.T) {
	now := time.Date(2023, 5, 20, 12, 0, 0, 0, time.UTC)
	span, _ := timeexpr.Find("what happened on 7 May 2023", now)
	day8 := time.Date(2023, 5, 8, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		created time.Time
		content string
		want    float64
	}{
		{time.Date(2023, 5, 7, 18, 0, 0, 0, time.UTC), "we went to the group", 1 + TimeBoost},
		{day8, "Yesterday I went to the support group", 1 + TimeBoost},
		{day8, "I am going to the support group", 1},
	} {
		if got := TimeFactor(&span, c.created, c.content, now); got != c.want {
			t.Errorf("%s %q: %v, want %v", c.created, c.content, got, c.want)
		}
	}
	if TimeFactor(nil, day8, "", now) != 1 {
		t.Error("no span")
	}
	recent := &timeexpr.Span{Recent: true}
	if fresh, old := TimeFactor(recent, now, "", now), TimeFactor(recent, now.Add(-RecentHalfLife), "", now); !near(fresh, 1+RecentBoost) || !near(old, 1+RecentBoost/2) {
		t.Errorf("recent: %v, %v", fresh, old)
	}
}

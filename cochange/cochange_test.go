package cochange

import (
	"fmt"
	"testing"
	"time"
)

func at(i int) time.Time { return time.Unix(1700000000+int64(i)*3600, 0) }

func names(s []Suggestion) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.File
	}
	return out
}

func TestRecommendersRankPartners(t *testing.T) {
	m := New(Options{})
	for i := 0; i < 5; i++ {
		m.Learn(Commit{Time: at(i), Files: []string{"a.go", "a_test.go"}})
	}
	m.Learn(Commit{Time: at(6), Files: []string{"a.go", "b.go", "c.go", "d.go"}})
	m.Learn(Commit{Time: at(7), Files: []string{"b.go", "c.go"}})
	huge := make([]string, 40)
	for i := range huge {
		huge[i] = fmt.Sprintf("gen/%d.go", i)
	}
	huge[0] = "a.go"
	if m.Learn(Commit{Time: at(8), Files: huge}) {
		t.Fatal("a commit over MaxFiles was learned")
	}
	for _, method := range Methods {
		got := m.Suggest([]string{"a.go"}, method, 3)
		if len(got) == 0 || got[0].File != "a_test.go" {
			t.Errorf("%s: %v", method, names(got))
		}
		for _, s := range got {
			if s.File == "a.go" || s.File == "gen/1.go" {
				t.Errorf("%s suggested %s", method, s.File)
			}
		}
	}
	p := m.Partners("a.go", 0)
	if p[0].Count != 5 || p[0].Confidence != 5.0/6 {
		t.Fatalf("partners: %+v", p[0])
	}
	// ROSE with a multi-file query prefers rules whose antecedent holds.
	got := m.Suggest([]string{"b.go", "c.go"}, Rose, 5)
	if len(got) < 2 || got[0].File != "a.go" && got[0].File != "d.go" {
		t.Fatalf("rose exact: %v", names(got))
	}
	if m.Suggest([]string{"unknown.go"}, Count, 5) != nil {
		t.Fatal("suggestions for a file with no history from count")
	}
}

func TestRenameKeepsHistoryAndColdStartUsesDirectory(t *testing.T) {
	m := New(Options{})
	for i := 0; i < 3; i++ {
		m.Learn(Commit{Time: at(i), Files: []string{"old/x.go", "old/x_test.go", "docs/x.md"}})
	}
	m.Rename("old/x.go", "new/x.go")
	if m.FileCommits("old/x.go") != 0 || m.FileCommits("new/x.go") != 3 {
		t.Fatalf("rename: %d %d", m.FileCommits("old/x.go"), m.FileCommits("new/x.go"))
	}
	got := m.Suggest([]string{"new/x.go"}, Weighted, 5)
	if len(got) != 2 || got[0].Count != 3 || got[1].Count != 3 {
		t.Fatalf("after rename: %+v", got)
	}
	back := m.Partners("old/x_test.go", 5)
	if fmt.Sprint(names(back)) != "[docs/x.md new/x.go]" || back[1].Count != 3 {
		t.Fatalf("partner side of the rename: %+v", back)
	}
	// A brand-new file borrows its directory's recently changed files.
	if got := m.Suggest([]string{"docs/y.md"}, Weighted, 5); len(got) != 1 || got[0].File != "docs/x.md" {
		t.Fatalf("cold start: %v", names(got))
	}
}

func TestWeightedPrefersRecentSmallCommits(t *testing.T) {
	m := New(Options{HalfLife: 24 * time.Hour})
	// Long ago, q changed with old.go many times; lately with fresh.go.
	for i := 0; i < 6; i++ {
		m.Learn(Commit{Time: at(i), Files: []string{"q.go", "old.go"}})
	}
	for i := 0; i < 3; i++ {
		m.Learn(Commit{Time: at(24*30 + i), Files: []string{"q.go", "fresh.go"}})
	}
	if got := m.Suggest([]string{"q.go"}, Weighted, 2); got[0].File != "fresh.go" {
		t.Fatalf("recency: %v", names(got))
	}
	if got := m.Suggest([]string{"q.go"}, Count, 2); got[0].File != "old.go" {
		t.Fatalf("count ignores recency: %v", names(got))
	}
}

func TestWeightedFallbackRanksBelowEvidence(t *testing.T) {
	m := New(Options{})
	m.Learn(Commit{Time: at(0), Files: []string{"docs/a.md", "docs/other.md"}})
	for i := 1; i < 3; i++ {
		m.Learn(Commit{Time: at(i), Files: []string{"a.go", "b.go"}})
	}
	m.Learn(Commit{Time: at(3), Files: []string{"lib/c.go", "lib/d.go"}})
	got := m.Suggest([]string{"a.go"}, Weighted, 5)
	if fmt.Sprint(names(got)) != "[b.go docs/a.md]" || got[0].Count != 2 || got[1].Count != 0 {
		t.Fatalf("evidence, then the stem twin without evidence: %+v", got)
	}
	if got := m.Suggest([]string{"a.go"}, Weighted, 1); fmt.Sprint(names(got)) != "[b.go]" {
		t.Fatalf("enough evidence needs no fallback: %v", names(got))
	}
	if got := m.Suggest([]string{"lib/new.go"}, Weighted, 5); fmt.Sprint(names(got)) != "[lib/c.go lib/d.go]" {
		t.Fatalf("a new file borrows its directory: %v", names(got))
	}
}

func TestWeightedPrefersPairsChangedTogetherLately(t *testing.T) {
	m := New(Options{})
	// Same commit sizes and counts; b.go changed with q.go most recently.
	m.Learn(Commit{Time: at(0), Files: []string{"q.go", "b.go"}})
	m.Learn(Commit{Time: at(0), Files: []string{"q.go", "a.go"}})
	m.Learn(Commit{Time: at(0), Files: []string{"q.go", "b.go"}})
	m.Learn(Commit{Time: at(0), Files: []string{"q.go", "a.go"}})
	if got := m.Suggest([]string{"q.go"}, Weighted, 2); fmt.Sprint(names(got)) != "[a.go b.go]" || got[0].Score <= got[1].Score {
		t.Fatalf("recent pair first: %+v", got)
	}
}

package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Over two years of memory, with the default weights, the strongest match
// comes first whatever its age, equal matches come newest first, and no
// match scores zero; in lexical and hybrid search alike.
func TestSearchOverTwoYearsOfMemory(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for name, opts := range searchModes() {
		t.Run(name, func(t *testing.T) {
			opts.Now = func() time.Time { return now }
			s := openTest(t, opts)
			reqs := []SaveRequest{
				{Content: "Billing retries back off exponentially: one second, four, then sixteen, because the card network rate-limits retries.", Type: memory.TypeDecision, Created: now.AddDate(-2, 0, 0)},
				{Content: "The billing dashboard got a new colour scheme.", Type: memory.TypeDecision, Created: now.AddDate(0, 0, -2)},
				{Content: "Deploys go through the canary pipeline first.", Type: memory.TypeDecision, Created: now.AddDate(-1, -6, 0)},
				{Content: "Deploys go through the canary pipeline first.", Type: memory.TypeDecision, Created: now.AddDate(0, -3, 0)},
			}
			// months of unrelated memory around them
			for i := range 60 {
				reqs = append(reqs, SaveRequest{Content: fmt.Sprintf("Release %d notes: the parser handles case %d.", i, i), Type: memory.TypeProgress, Created: now.AddDate(0, 0, -12*i)})
			}
			ents, err := s.Memory().Import(ctx, reqs)
			if err != nil {
				t.Fatal(err)
			}
			if name == "hybrid" { // every vector there, as the warm process leaves them
				if _, err := s.Recall().Embed(ctx, nil); err != nil {
					t.Fatal(err)
				}
			}
			strongOld, weakNew, olderTwin, newerTwin := ents[0].ID, ents[1].ID, ents[2].ID, ents[3].ID
			hits, _, err := s.Recall().Search(ctx, SearchRequest{Query: "how do billing retries back off", Filter: Filter{Limit: 5}})
			if err != nil || len(hits) < 2 {
				t.Fatalf("%v %v", hits, err)
			}
			if hits[0].ID != strongOld {
				t.Errorf("the two-year-old strong match is not first: %q (score %.4f), then %q (%.4f)", hits[0].Content, hits[0].Score, hits[1].Content, hits[1].Score)
			}
			if !containsID(hits, weakNew) {
				t.Errorf("the weak recent match is missing: %v", hits)
			}
			for _, h := range hits {
				if h.Score <= 0.01 || h.Priors == nil || h.Priors.Recency < 0.75 {
					t.Errorf("%q scores %.4f (priors %+v)", h.Content, h.Score, h.Priors)
				}
			}
			hits, _, err = s.Recall().Search(ctx, SearchRequest{Query: "canary pipeline deploys", Filter: Filter{Limit: 2}})
			if err != nil || len(hits) != 2 || hits[0].ID != newerTwin || hits[1].ID != olderTwin {
				t.Errorf("equal matches are not newest first: %v %v", hits, err)
			}
		})
	}
}

func containsID(hits []ProjectHit, id string) bool {
	for _, h := range hits {
		if h.ID == id {
			return true
		}
	}
	return false
}

// Thousands of indexed commits that share the query's words do not crowd
// a saved issue out of the results: memory and commits have candidate
// pools of their own, and a commit weighs half (rank.CommitPrior).
func TestCommitsDoNotCrowdOutMemory(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	var stream strings.Builder
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for i := range 400 {
		msg := fmt.Sprintf("sync: test the sync of remote %d, slow path %d", i, i)
		fmt.Fprintf(&stream, "commit refs/heads/main\nmark :%d\ncommitter Dev <dev@example.com> %d +0000\ndata %d\n%s\n", i+1, base+int64(i)*3600, len(msg), msg)
		if i == 0 {
			stream.WriteString("from main^0\n")
		} else {
			fmt.Fprintf(&stream, "from :%d\n", i)
		}
		body := fmt.Sprintf("%d\n", i)
		fmt.Fprintf(&stream, "M 100644 inline sync.c\ndata %d\n%s\n", len(body), body)
	}
	testrepo.GitStdin(t, dir, stream.String(), "fast-import", "--quiet", "--force")
	testrepo.Git(t, dir, "reset", "-q", "--hard", "main")
	for name, opts := range searchModes() {
		t.Run(name, func(t *testing.T) {
			s, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Code().Index(ctx, IndexOptions{}); err != nil {
				t.Fatal(err)
			}
			issue, err := s.Memory().Save(ctx, SaveRequest{Content: "The sync test is slow because it waits for the fetch timeout of 30 seconds.", Type: memory.TypeIssue})
			if err != nil {
				t.Fatal(err)
			}
			if name == "hybrid" { // every commit embedded too: the hard case
				if _, err := s.Recall().Embed(ctx, nil); err != nil {
					t.Fatal(err)
				}
			}
			hits, _, err := s.Recall().Search(ctx, SearchRequest{Query: "why is the sync test slow", Filter: Filter{Limit: 5}})
			if err != nil || len(hits) == 0 {
				t.Fatalf("%v %v", hits, err)
			}
			if hits[0].Type != memory.TypeIssue || !containsID(hits, issue.ID) {
				t.Errorf("first is %s %q (score %.4f), not the saved issue", hits[0].Type, hits[0].Content, hits[0].Score)
			}
			commits := 0
			for _, h := range hits {
				if h.Type == memory.TypeGitCommit {
					commits++
				}
			}
			if commits == 0 {
				t.Errorf("no commit among the results of a query that 400 commits match: %v", hits)
			}
		})
	}
}

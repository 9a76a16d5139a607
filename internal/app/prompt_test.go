package app

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/git-synaptic/git-synaptic/notes"
)

// accesses is the local use count of every entry, by id.
func accesses(t *testing.T, s *Service) map[string]int {
	t.Helper()
	c, err := s.openCache()
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Standings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, x := range st {
		out[x.ID] = x.Usage.Accesses
	}
	return out
}

// The prompt hook counts what it shows the agent, once per session: not
// the search hits it only scored, and not every prompt that repeats an
// item.
func TestPromptCountsWhatItShowsOncePerSession(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	s, err := Open(testrepo.NewRepo(t), Options{Now: func() time.Time { return now }, Warn: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old := now.AddDate(0, 0, -3)
	var reqs []SaveRequest
	for _, c := range []string{
		"billing retries back off exponentially up to a minute",
		"billing retries back off with jitter",
		"billing retries stop after five attempts",
		"the billing worker retries on timeouts only",
		"retries in billing are logged at warn level",
		"billing retry counts are in the metrics dashboard",
	} {
		reqs = append(reqs, SaveRequest{Content: c, Type: notes.TypeInsight, Created: old})
	}
	reqs = append(reqs, SaveRequest{Content: "deployed the new billing worker", Type: notes.TypeProgress, Created: now.Add(-time.Hour)})
	ents, err := s.Memory().Import(ctx, reqs, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		md, err := s.Agent().PromptContext(ctx, "s1", "how do billing retries back off?")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && (!strings.Contains(md, "Related to this prompt") || !strings.Contains(md, "deployed the new billing worker")) {
			t.Fatalf("prompt context:\n%s", md)
		}
	}
	used := accesses(t, s)
	total, shown := 0, 0
	for _, e := range ents {
		total += used[e.ID]
		if used[e.ID] > 1 {
			t.Errorf("%q counted %d uses in one session", e.Content, used[e.ID])
		}
		if used[e.ID] == 1 {
			shown++
		}
	}
	if used[ents[6].ID] != 1 || shown != 3 || total != 3 {
		t.Errorf("uses after 5 prompts: %v (want the recent entry and the 2 injected matches, once each)", used)
	}
}

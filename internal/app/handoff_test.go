package app

import (
	"context"
	"testing"

	"github.com/git-synaptic/git-synaptic/memory"
)

// Two stop hooks at once can both write a session's first handoff; the
// next stop keeps one and archives the other.
func TestHandoffTwinsAreArchived(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	if _, err := s.Memory().Save(ctx, SaveRequest{Content: "we decided to keep retries at three", Type: memory.TypeDecision, SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := s.Memory().Save(ctx, SaveRequest{Content: handoffTitle + " s1\n\nMemory saved: 1 decision.", Type: memory.TypeHandoff, SessionID: "s1"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Agent().SessionHandoff(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	live, _ := s.Recall().List(ctx, Filter{Types: []memory.Type{memory.TypeHandoff}, Session: "s1"})
	all, _ := s.Recall().List(ctx, Filter{Types: []memory.Type{memory.TypeHandoff}, Session: "s1", IncludeArchived: true})
	if len(live) != 1 || len(all) != 2 {
		t.Errorf("handoffs: %d live of %d", len(live), len(all))
	}
}

//go:build model

package app

import (
	"context"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/directive"
)

// With the real model, an entry that reads like a directive template is a
// pending rule even when no directive word gives it away; one that only
// shares words with a template is not.
func TestDirectivesByMeaning(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	meant, _ := s.Memory().Save(ctx, SaveRequest{Content: "it is wrong, please do it differently"})
	plain, _ := s.Memory().Save(ctx, SaveRequest{Content: "the test does it differently on CI"})
	if directive.Is(meant.Content, meant.Type) {
		t.Fatal("the words alone catch it: the test proves nothing")
	}
	pending, err := s.Agent().PendingRules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].ID != meant.ID {
		t.Fatalf("pending: %+v (want %s only, not %s)", pending, meant.ID, plain.ID)
	}
}

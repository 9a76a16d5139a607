package main_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// A query with no words fails in the BM25 stage while the query embedding
// runs in the background. The search must wait for it before returning:
// closing the model under a running ONNX Runtime session crashed the
// process (SIGSEGV) about one run in two. In process, with the real model.
func TestSearchWithoutWordsWaitsForItsQueryEmbedding(t *testing.T) {
	modelHome(t)
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	for round := 0; round < 5; round++ {
		s, err := app.Open(dir, app.Options{Warn: os.Stderr})
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			if _, err := s.Memory().Save(ctx, app.SaveRequest{Content: "the build fails because sqlite is missing"}); err != nil {
				t.Fatal(err)
			}
		}
		if st, err := s.Recall().VectorStatus(ctx); err != nil || st.Error != "" {
			t.Fatalf("this test needs the embedding model (make model): %v %s", err, st.Error)
		}
		for i := 0; i < 200/5; i++ {
			_, info, err := s.Recall().Search(ctx, app.SearchRequest{Query: "!!!"})
			if !errors.Is(err, app.ErrNoWords) {
				t.Fatalf("search '!!!': want ErrNoWords, got %v (mode %s)", err, info.Mode)
			}
		}
		// The last search returned just now; closing the model must not
		// pull it from under an embedding still running.
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

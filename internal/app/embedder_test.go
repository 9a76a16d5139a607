package app

import (
	"os"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// wordEmbedder is a deterministic stand-in for the embedding model in unit
// tests: a text's vector is the normalised sum of ±1 at hashed positions
// of its words (lower-cased, crudely stemmed, common words dropped), so
// texts that share most words are close and texts that share none are
// orthogonal. The end-to-end suite uses the real model.
type wordEmbedder = testrepo.WordEmbedder

// searchModes are the options for search by words alone (no model) and
// hybrid search (the wordEmbedder), by name, for tests that hold in both.
func searchModes() map[string]Options {
	return map[string]Options{
		"lexical": {Model: "no-such-model"},
		"hybrid":  {Embedder: wordEmbedder{}},
	}
}

// openTest opens a Service on a new repository, closed when the test
// ends; warnings go to stderr unless opts names a writer.
func openTest(t *testing.T, opts Options) *Service {
	t.Helper()
	if opts.Warn == nil {
		opts.Warn = os.Stderr
	}
	s, err := Open(testrepo.NewRepo(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

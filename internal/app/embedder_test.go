package app

import (
	"context"
	"hash/fnv"
	"math"
	"os"
	"strings"
	"testing"
	"unicode"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// wordEmbedder is a deterministic stand-in for the embedding model in unit
// tests: a text's vector is the normalised sum of ±1 at hashed positions
// of its words (lower-cased, crudely stemmed, common words dropped), so
// texts that share most words are close and texts that share none are
// orthogonal. The end-to-end suite uses the real model.
type wordEmbedder struct{}

const wordDim = 1024

var fillerWords = map[string]bool{"a": true, "an": true, "the": true, "on": true, "in": true, "at": true, "to": true, "it": true,
	"is": true, "too": true, "again": true, "under": true, "before": true, "once": true, "more": true}

func (wordEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, wordDim)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if fillerWords[w] {
				continue
			}
			for _, suf := range []string{"ing", "ed", "es", "s"} {
				if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
					w = strings.TrimSuffix(w, suf)
					if n := len(w); w[n-1] == w[n-2] { // running → run
						w = w[:n-1]
					}
					break
				}
			}
			h := fnv.New32a()
			h.Write([]byte(w))
			x := h.Sum32()
			sign := float32(1)
			if x&1 == 1 {
				sign = -1
			}
			v[(x>>1)%wordDim] += sign
		}
		var norm float64
		for _, x := range v {
			norm += float64(x * x)
		}
		if norm > 0 {
			for j := range v {
				v[j] /= float32(math.Sqrt(norm))
			}
		}
		out[i] = v
	}
	return out, nil
}

func (wordEmbedder) Dim() int        { return wordDim }
func (wordEmbedder) ModelID() string { return "test-words-1" }
func (wordEmbedder) Backend() string { return "test" }

// openTest opens a Service on a new repository, closed when the test
// ends; warnings go to stderr unless opts names a writer.
// searchModes are the options for search by words alone (no model) and
// hybrid search (the wordEmbedder), by name, for tests that hold in both.
func searchModes() map[string]Options {
	return map[string]Options{
		"lexical": {Model: "no-such-model"},
		"hybrid":  {Embedder: wordEmbedder{}},
	}
}

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

package testrepo

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// WordEmbedder stands in for the embedding model in tests that need no
// model: each word (filler words left out, a few suffixes cut) adds a
// signed hash to the vector, so texts that share words are alike. It has
// the methods of app.Embedder.
type WordEmbedder struct{}

// WordDim is the length of WordEmbedder's vectors.
const WordDim = 1024

var fillerWords = map[string]bool{"a": true, "an": true, "the": true, "on": true, "in": true, "at": true, "to": true, "it": true,
	"is": true, "too": true, "again": true, "under": true, "before": true, "once": true, "more": true}

// Embed returns one vector per text.
func (WordEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, WordDim)
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
			v[(x>>1)%WordDim] += sign
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

// Dim is WordDim.
func (WordEmbedder) Dim() int { return WordDim }

// ModelID names the stand-in.
func (WordEmbedder) ModelID() string { return "test-words-1" }

// Backend is "test".
func (WordEmbedder) Backend() string { return "test" }

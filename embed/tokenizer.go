package embed

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer splits text into SentencePiece unigram pieces the way Universal
// Sentence Encoder lite was trained: NFKC, "▁" for every space and one in
// front, then the highest-scoring segmentation (Viterbi) over the
// vocabulary. Characters no piece starts with become id 0 (<unk>), one id
// for a run of them. It mirrors the reference JavaScript tokenizer shipped
// with the model, so the ids equal the original's.
type Tokenizer struct {
	root     *trieNode
	pieceLen []int // piece length in UTF-16 units, by id, as the reference steps back
	maxLen   int   // longest output, in tokens
}

type trieNode struct {
	next  map[rune]*trieNode
	id    int32 // -1 when no piece ends here
	score float64
}

// reservedPieces are the control ids at the start of the vocabulary that
// never match text.
const reservedPieces = 6

// LoadTokenizer reads the unigram vocabulary of a tokenizer.json
// (model.vocab: [[piece, score], ...]).
func LoadTokenizer(path string, maxTokens int) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Model struct {
			Type  string              `json:"type"`
			Vocab [][]json.RawMessage `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if doc.Model.Type != "Unigram" || len(doc.Model.Vocab) <= reservedPieces {
		return nil, fmt.Errorf("%s: want a Unigram vocabulary, got %q with %d pieces", path, doc.Model.Type, len(doc.Model.Vocab))
	}
	t := &Tokenizer{root: newTrieNode(), pieceLen: make([]int, len(doc.Model.Vocab)), maxLen: maxTokens}
	for id, pair := range doc.Model.Vocab {
		var piece string
		var score float64
		if len(pair) != 2 || json.Unmarshal(pair[0], &piece) != nil || json.Unmarshal(pair[1], &score) != nil {
			return nil, fmt.Errorf("%s: vocabulary entry %d is not [piece, score]", path, id)
		}
		t.pieceLen[id] = len(utf16.Encode([]rune(piece)))
		if id < reservedPieces {
			continue
		}
		n := t.root
		for _, r := range piece {
			c := n.next[r]
			if c == nil {
				c = newTrieNode()
				n.next[r] = c
			}
			n = c
		}
		n.id, n.score = int32(id), score
	}
	return t, nil
}

func newTrieNode() *trieNode { return &trieNode{next: map[rune]*trieNode{}, id: -1} }

// Encode returns the token ids of text, at most maxTokens of them.
func (t *Tokenizer) Encode(text string) []int64 {
	text = norm.NFKC.String(strings.ToValidUTF8(text, "\uFFFD"))
	if text == "" {
		return nil
	}
	syms := []rune("\u2581" + strings.ReplaceAll(text, " ", "\u2581"))
	n := len(syms)
	// best[i]: score of the best segmentation of syms[:i]; word[i]: the id
	// of its last piece. 0 means unset, as in the reference implementation.
	best := make([]float64, n+1)
	word := make([]int32, n+1)
	for i := 0; i < n; i++ {
		node, matched := t.root.next[syms[i]], false
		for j := i; node != nil; {
			if node.id >= 0 {
				matched = true
				relax(best, word, i, j+1, node.id, node.score)
			}
			j++
			if j >= n {
				break
			}
			node = node.next[syms[j]]
		}
		if !matched {
			relax(best, word, i, i+1, 0, 0)
		}
	}
	var ids []int64
	for end := n; end > 0; {
		id := word[end]
		ids = append(ids, int64(id))
		end -= max(t.pieceLen[id], 1)
	}
	// reverse, merging runs of <unk>
	out := make([]int64, 0, len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		if ids[i] == 0 && len(out) > 0 && out[len(out)-1] == 0 {
			continue
		}
		out = append(out, ids[i])
	}
	if t.maxLen > 0 && len(out) > t.maxLen {
		out = out[:t.maxLen]
	}
	return out
}

// relax offers a piece spanning [start, end) to the segmentation ending at
// end. Candidates are visited by end position, then start, the same order
// as the reference, so ties resolve the same way (later wins on equal score).
func relax(best []float64, word []int32, start, end int, id int32, score float64) {
	s := score + best[start]
	if best[end] == 0 || s >= best[end] {
		best[end], word[end] = s, id
	}
}

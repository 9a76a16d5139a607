package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// corpus is a first-order Markov chain over the words of a real
// repository's commit messages, with their lengths: generated memory then
// has a real project's vocabulary, word frequencies and phrases, where a
// list of 200 words made every query term match a fifth of all entries.
// Every 50th message is kept out of the chain; queries come from those.
type corpus struct {
	next    map[string][]string // "" starts a message, end ends one
	lengths []int
	queries []string
}

const end = "\x00"

func corpusOf(b *testing.B, dir string) *corpus {
	c := &corpus{next: map[string][]string{}}
	out := testrepo.Git(b, dir, "log", "--no-merges", "--format=%B%x01")
	for i, msg := range strings.Split(out, "\x01") {
		words := strings.Fields(msg)
		if len(words) == 0 {
			continue
		}
		if i%50 == 0 {
			if subject := strings.Fields(strings.SplitN(strings.TrimSpace(msg), "\n", 2)[0]); len(subject) >= 4 && len(c.queries) < 30 {
				c.queries = append(c.queries, strings.Join(subject, " "))
			}
			continue
		}
		c.lengths = append(c.lengths, min(max(len(words), 8), 150))
		prev := ""
		for _, w := range append(words, end) {
			c.next[prev] = append(c.next[prev], w)
			prev = w
		}
	}
	if len(c.queries) < 10 || len(c.lengths) < 500 {
		b.Fatalf("%s has too few commit messages for a corpus (%d)", dir, len(c.lengths))
	}
	return c
}

// note is one generated entry's text: messages of the chain joined until
// it has a length drawn from the real messages.
func (c *corpus) note(rng *rand.Rand) string {
	n := c.lengths[rng.Intn(len(c.lengths))]
	words := make([]string, 0, n)
	prev := ""
	for len(words) < n {
		w := c.next[prev][rng.Intn(len(c.next[prev]))]
		if w == end {
			prev = ""
			continue
		}
		words = append(words, w)
		prev = w
	}
	return strings.Join(words, " ")
}

// entries writes n entries as import JSON lines: agent sessions of 20
// entries a minute apart, spread over the two years before now, of the
// types agents save.
func (c *corpus) entries(buf *bytes.Buffer, rng *rand.Rand, from, n int) {
	types := []string{"decision", "insight", "issue", "progress", "reference", "handoff"}
	enc := json.NewEncoder(buf)
	var started time.Time
	for i := range n {
		k := from + i
		if i == 0 || k%20 == 0 {
			started = time.Now().Add(-time.Duration(rng.Intn(2*365*24)) * time.Hour)
		}
		enc.Encode(map[string]any{"content": c.note(rng), "type": types[rng.Intn(len(types))],
			"created": started.Add(time.Duration(k%20) * time.Minute), "session_id": fmt.Sprintf("scale-%d", k/20)})
	}
}

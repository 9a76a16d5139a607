package app

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Thresholds of the memory intelligence (cosine similarity of USE-lite
// vectors), from the seed designs.
const (
	duplicateCosine     = 0.90 // a save this close to an entry is a near-duplicate
	patternCosine       = 0.75 // issues this close recur
	consolidationCosine = 0.75 // issues/decisions this close could be one entry
	conflictCosine      = 0.70 // a correction this close to a rule may contradict it
	intelligenceDays    = 30   // patterns and consolidation look this far back
	sharedTagBonus      = 0.05 // shared tags count as a little similarity
)

// Tags the intelligence layer writes (as ordinary, shared edit operations).
const (
	TagCorrection      = "correction"
	TagPatternResolved = "pattern-resolved"
	TagRuleAccepted    = "rule-accepted"
	TagRuleDismissed   = "rule-dismissed"
)

// withVectors loads the model, embeds what a bounded pass can and runs f.
// Without a model it returns the error (callers degrade to lexical).
func (s *core) withVectors(ctx context.Context, f func(c *cache.Cache, m Embedder) error) error {
	m, err := s.embedder()
	if err != nil {
		return err
	}
	return s.withCache(ctx, func(c *cache.Cache) error {
		if _, err := s.embedPending(ctx, c, m, searchEmbedBudget(m.Backend()), nil); err != nil {
			return err
		}
		if err := s.embedRecentIssues(ctx, c, m); err != nil {
			return err
		}
		if err := s.storeTemplates(ctx, c, m); err != nil {
			return err
		}
		return f(c, m)
	})
}

// storeTemplates stores the directive templates' vectors once per model,
// for the processes that find directives by meaning without it.
func (s *core) storeTemplates(ctx context.Context, c *cache.Cache, m Embedder) error {
	have, err := c.TextVectors(ctx, directiveTemplates[:1])
	if err != nil || have[0] != nil {
		return err
	}
	tvecs, err := m.Embed(ctx, directiveTemplates)
	if err != nil {
		return err
	}
	return c.SaveTextVectors(ctx, directiveTemplates, tvecs)
}

// recentOf selects the entries of types that patterns and consolidation
// look back on (intelligenceDays, the newest 500).
func (s *core) recentOf(types ...memory.Type) cache.Filter {
	return cache.Filter{Types: types, Since: s.now().Add(-intelligenceDays * 24 * time.Hour), Limit: 500}
}

// embedRecentIssues embeds the recent issues that wait for a vector, ahead
// of the rest of the backlog (thousands of indexed commits, say):
// patterns are found by meaning, whatever saved the issue.
func (s *core) embedRecentIssues(ctx context.Context, c *cache.Cache, m Embedder) error {
	pending, err := c.PendingIn(ctx, s.recentOf(memory.TypeIssue))
	if err != nil || len(pending) == 0 {
		return err
	}
	return embedStore(ctx, c, m, pending)
}

// issuesWait reports whether a recent issue waits for a vector: then
// finding patterns is worth loading the model.
func (s *core) issuesWait(ctx context.Context) bool {
	wait := false
	_ = s.withCache(ctx, func(c *cache.Cache) error {
		f := s.recentOf(memory.TypeIssue)
		f.Limit = 1
		p, err := c.PendingIn(ctx, f)
		wait = err == nil && len(p) > 0
		return nil
	})
	return wait
}

// vectorSource is where the views derived from memory's meaning (rules
// pending, patterns, consolidation) take their vectors from.
type vectorSource int

const (
	// storedVectors are those the last model stored, read without loading
	// it (about 300 ms that a session-start hook should not pay); entries
	// saved since the last embedding have none. A model loaded already is
	// used all the same.
	storedVectors vectorSource = iota
	// modelVectors are the model's, loaded if need be, with what waits for
	// a vector embedded first.
	modelVectors
)

func (v vectorSource) String() string {
	if v == modelVectors {
		return "model"
	}
	return "stored"
}

// vectorsAtHand runs f with the cache reading vectors from src (see
// vectorSource); f does not run when there are none.
func (s *core) vectorsAtHand(ctx context.Context, src vectorSource, f func(c *cache.Cache) error) error {
	if src == modelVectors || s.model.loaded() != nil {
		return s.withVectors(ctx, func(c *cache.Cache, _ Embedder) error { return f(c) })
	}
	return s.withCache(ctx, func(c *cache.Cache) error {
		if ok, err := c.UseStoredModel(ctx); !ok || err != nil {
			return err
		}
		return f(c)
	})
}

// Similar is an entry and how close it is to something.
type Similar struct {
	Entry
	Similarity float64 `json:"similarity"`
	// How: "vector" (cosine of embeddings) or "lexical" (shared words,
	// when no model is loaded).
	How string `json:"how"`
}

// Likeness is how near-duplicates are looked for.
type Likeness int

const (
	// ByWords compares words (Jaccard ≥ 0.8 with the entries holding the
	// content's four longest words): one cheap full-text query, no model.
	ByWords Likeness = iota
	// ByMeaning embeds the content and takes cosine ≥ 0.90, falling back
	// to words without a model: worth it where the model is loaded anyway
	// (the MCP server), not in a command that would load it for this.
	ByMeaning
)

// NearDuplicates finds entries that say what content says, by.
func (s *Recall) NearDuplicates(ctx context.Context, content string, by Likeness) ([]Similar, error) {
	out, _, err := s.nearDuplicates(ctx, content, by, nil)
	return out, err
}

// nearDuplicates is NearDuplicates that also returns content's vector
// when it embedded content (nil otherwise); meanwhile, unless nil, runs
// once on the calling goroutine while the search is under way: beside
// the embedding, or the SQL that finds entries by their words. It looks
// among saved memory only: a save links to its near-duplicates, and an
// indexed commit or note (whose ids are git's) is no entry to link to; a
// save that said what a commit's message says was refused ("related id
// ... must be a full 32-digit id").
func (s *Recall) nearDuplicates(ctx context.Context, content string, by Likeness, meanwhile func()) (out []Similar, vec []float32, err error) {
	if meanwhile == nil {
		meanwhile = func() {}
	}
	meanwhile = sync.OnceFunc(meanwhile) // by meaning, then by words: once
	defer meanwhile()
	if by == ByMeaning {
		vec, out, err = s.nearByMeaning(ctx, content, meanwhile)
		if err == nil {
			return out, vec, nil
		}
	}
	q := contentWords(content)
	if len(q) == 0 {
		return nil, nil, nil
	}
	// A near-duplicate shares at least 80% of the words, so it almost
	// surely holds the four longest: find those entries, then compare.
	words := make([]string, 0, len(q))
	for w := range q {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		if len(words[i]) != len(words[j]) {
			return len(words[i]) > len(words[j])
		}
		return words[i] < words[j]
	})
	words = words[:min(4, len(words))]
	// The cache as it is, without catching up with the refs first: that
	// check would cost save a millisecond, and the save catches up anyway.
	c, err := s.openCache()
	if err != nil {
		return nil, nil, err
	}
	var rows []cache.Row
	found := make(chan struct{})
	go func() { // SQL alone, on the cache opened above
		defer close(found)
		rows, err = c.WithAllWords(ctx, words, memory.SavableTypes, 20)
	}()
	meanwhile()
	<-found
	for _, r := range rows {
		if j := jaccard(q, contentWords(r.Content)); j >= 0.8 {
			out = append(out, Similar{Entry: entryOf(r), Similarity: j, How: "lexical"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Similarity > out[j].Similarity })
	if len(out) > 3 {
		out = out[:3]
	}
	return out, nil, err
}

// nearByMeaning is nearDuplicates by meaning: content's vector, and the
// saved entries within duplicateCosine of it. The embedding runs beside
// the cache's catching up, the vector search's plan and meanwhile (5 ms
// of an MCP save at a million entries, and its 10 ms embedding).
func (s *Recall) nearByMeaning(ctx context.Context, content string, meanwhile func()) (vec []float32, out []Similar, err error) {
	m, err := s.embedder()
	if err != nil {
		return nil, nil, err
	}
	q := startQuery(ctx, m, content)
	if q == nil {
		q = embedQuery(ctx, m, content, false)
	}
	defer q.wait() // whatever path this leaves by, the embedding is over
	err = s.withVectors(ctx, func(c *cache.Cache, _ Embedder) error {
		hits, err := c.NearestAlike(ctx, func() ([]float32, error) {
			if meanwhile != nil {
				meanwhile()
			}
			var err error
			vec, err = q.wait()
			return vec, err
		}, cache.Filter{Limit: 5, Types: memory.SavableTypes}, 5, duplicateCosine)
		for _, h := range hits {
			out = append(out, Similar{Entry: entryOf(h.Row), Similarity: h.Cosine, How: "vector"})
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return vec, out, nil
}

func jaccard(a, b map[string]bool) float64 {
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	union := len(a) + len(b) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// recentVectors returns the entries of types saved in the last 30 days,
// with their vectors. A long-lived process keeps the answer until entries
// or vectors change (and for at most a minute, as the window moves).
func (s *core) recentVectors(ctx context.Context, c *cache.Cache, types ...memory.Type) (*recentSet, error) {
	f := s.recentOf(types...)
	if !s.longLived {
		rows, vecs, err := c.VectorRows(ctx, f)
		return &recentSet{rows: entriesOf(rows), vecs: vecs, labels: map[string]string{}}, err
	}
	stamp, err := c.Stamp(ctx)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprint(stamp, types)
	if r, ok := s.recent[key]; ok && s.now().Sub(r.at) < time.Minute {
		return r, nil
	}
	rows, vecs, err := c.VectorRows(ctx, f)
	if err != nil {
		return nil, err
	}
	if len(s.recent) > 8 {
		s.recent = nil
	}
	if s.recent == nil {
		s.recent = map[string]*recentSet{}
	}
	r := &recentSet{at: s.now(), rows: entriesOf(rows), vecs: vecs, labels: map[string]string{}}
	s.recent[key] = r
	return r, nil
}

// recentSet is an answer of recentVectors, remembered in a long-lived
// process. labels remembers, with it, the pattern labels found for its
// issues (id → label, "" for none): exploring a pattern compares its issues
// with every open issue, so each is explored once. open and linked
// remember what was derived from it: its open issues (openIssues), and
// its groups by threshold and size (groups).
type recentSet struct {
	at     time.Time
	rows   []Entry
	vecs   [][]float32
	labels map[string]string
	open   *recentSet
	linked map[[2]float64][][]int
}

// groups returns the groups of the set's entries, largest first (see
// linked), comparing the entries once per set.
func (r *recentSet) groups(min float64, size int) []Group {
	key := [2]float64{min, float64(size)}
	idx, ok := r.linked[key]
	if !ok {
		idx = linked(r.rows, r.vecs, min, size)
		if r.linked == nil {
			r.linked = map[[2]float64][][]int{}
		}
		r.linked[key] = idx
	}
	return groupsOf(r.rows, idx)
}

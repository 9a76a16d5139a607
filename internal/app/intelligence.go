package app

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"

	"sync"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/embed"
	"github.com/git-synaptic/git-synaptic/notes"
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
func (s *Service) withVectors(ctx context.Context, f func(c *cache.Cache, m Embedder) error) error {
	m, err := s.embedder()
	if err != nil {
		return err
	}
	return s.withCache(ctx, func(c *cache.Cache) error {
		if _, err := s.embedPending(ctx, c, m, searchEmbedBudget(m.Backend()), nil); err != nil {
			return err
		}
		return f(c, m)
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

// NearDuplicates finds entries that say what content says. With semantic
// set it embeds content (worth it where the model is loaded anyway, as in
// the MCP server) and reports cosine ≥ 0.90; otherwise, and without a
// model, it compares words (Jaccard ≥ 0.8 with entries holding its four
// longest words), which costs one cheap full-text query.
func (s *Service) NearDuplicates(ctx context.Context, content string, semantic bool) ([]Similar, error) {
	var out []Similar
	if semantic {
		err := s.withVectors(ctx, func(c *cache.Cache, m Embedder) error {
			v, err := m.Embed(ctx, []string{content})
			if err != nil {
				return err
			}
			hits, err := c.Nearest(ctx, v[0], cache.Filter{Limit: 5}, 5)
			for _, h := range hits {
				if h.Cosine >= duplicateCosine {
					out = append(out, Similar{Entry: entryOf(h.Row), Similarity: h.Cosine, How: "vector"})
				}
			}
			return err
		})
		if err == nil {
			return out, nil
		}
	}
	q := contentWords(content)
	if len(q) == 0 {
		return nil, nil
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
		return nil, err
	}
	rows, err := c.WithAllWords(ctx, words, 20)
	for _, r := range rows {
		if j := jaccard(q, contentWords(r.Content)); j >= 0.8 {
			out = append(out, Similar{Entry: entryOf(r), Similarity: j, How: "lexical"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Similarity > out[j].Similarity })
	if len(out) > 3 {
		out = out[:3]
	}
	return out, err
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

// Group is a set of similar entries, oldest first.
type Group struct {
	ID      string    `json:"id"` // the oldest entry's id
	Entries []Entry   `json:"entries"`
	Since   time.Time `json:"since"`
	Last    time.Time `json:"last"`
}

// groups links entries whose similarity (cosine, plus a bonus per shared
// tag) reaches min, and returns the connected groups of at least size,
// largest first.
func groups(rows []Entry, vecs [][]float32, min float64, size int) []Group {
	seen := map[int]bool{}
	var out []Group
	for i := range rows {
		if seen[i] {
			continue
		}
		if g := component(rows, vecs, i, min, seen); len(g.Entries) >= size {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].Entries) != len(out[j].Entries) {
			return len(out[i].Entries) > len(out[j].Entries)
		}
		return out[i].Last.After(out[j].Last)
	})
	return out
}

func sharedTags(a, b []string) int {
	n := 0
	for _, x := range a {
		for _, y := range b {
			if x == y && x != TagCorrection {
				n++
			}
		}
	}
	return n
}

// recentVectors returns the entries of types saved in the last 30 days,
// with their vectors. A long-lived process keeps the answer until entries
// or vectors change (and for at most a minute, as the window moves).
func (s *Service) recentVectors(ctx context.Context, c *cache.Cache, types ...notes.Type) (*recentSet, error) {
	f := cache.Filter{Types: types, Since: s.now().Add(-intelligenceDays * 24 * time.Hour), Limit: 500}
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
// with every open issue, so each is explored once.
type recentSet struct {
	at     time.Time
	rows   []Entry
	vecs   [][]float32
	labels map[string]string
}

// Patterns returns recurring issues: three or more issues of the last 30
// days that are alike (an issue with two or more similar ones), unless the
// pattern was resolved. Needs the embedding model.
func (s *Service) Patterns(ctx context.Context) ([]Group, error) {
	var out []Group
	err := s.withVectors(ctx, func(c *cache.Cache, _ Embedder) error {
		open, err := s.openIssues(ctx, c)
		if err != nil {
			return err
		}
		out = groups(open.rows, open.vecs, patternCosine, 3)
		return nil
	})
	return out, err
}

// openIssues returns the issues of the last 30 days whose pattern was not
// resolved, with their vectors (and the remembered labels).
func (s *Service) openIssues(ctx context.Context, c *cache.Cache) (recentSet, error) {
	all, err := s.recentVectors(ctx, c, notes.TypeIssue)
	if err != nil {
		return recentSet{}, err
	}
	open := recentSet{labels: all.labels}
	for i, r := range all.rows {
		if !slices.Contains(r.Tags, TagPatternResolved) {
			open.rows, open.vecs = append(open.rows, r), append(open.vecs, all.vecs[i])
		}
	}
	return open, nil
}

// PatternLabel is how search results and context show a pattern.
func PatternLabel(g Group) string {
	return fmt.Sprintf("[Pattern: seen %d times since %s]", len(g.Entries), g.Since.Local().Format(time.DateOnly))
}

// ResolvePattern marks the pattern that contains the entry idPrefix names
// (or whose id it is) resolved: every issue in it gets the tag
// pattern-resolved, an ordinary edit that syncs. It returns the pattern.
func (s *Service) ResolvePattern(ctx context.Context, idPrefix string) (Group, error) {
	id, err := s.Resolve(ctx, idPrefix)
	if err != nil {
		return Group{}, err
	}
	patterns, err := s.Patterns(ctx)
	if err != nil {
		return Group{}, err
	}
	for _, g := range patterns {
		for _, r := range g.Entries {
			if r.ID == id {
				for _, m := range g.Entries {
					if _, err := s.Edit(ctx, m.ID, EditRequest{AddTags: []string{TagPatternResolved}}); err != nil {
						return g, err
					}
				}
				return g, nil
			}
		}
	}
	return Group{}, fmt.Errorf("%w: %s is not part of a recurring-issue pattern", cache.ErrNotFound, ShortID(id))
}

// Consolidation returns groups of three or more issues and decisions of
// the last 30 days that say much the same (cosine ≥ 0.75, shared tags
// helping): candidates to merge into one longterm entry.
func (s *Service) Consolidation(ctx context.Context) ([]Group, error) {
	var out []Group
	err := s.withVectors(ctx, func(c *cache.Cache, _ Embedder) error {
		recent, err := s.recentVectors(ctx, c, notes.TypeIssue, notes.TypeDecision)
		if err != nil {
			return err
		}
		out = groups(recent.rows, recent.vecs, consolidationCosine, 3)
		return nil
	})
	return out, err
}

// ConsolidationHowTo tells an agent what to do with a candidate group.
const ConsolidationHowTo = "Write one longterm summary of each group (git synaptic save --tier longterm --related ID... or context_save with related_ids), then archive the originals (git synaptic archive ID... or context_archive)."

// directiveRE matches the phrasings of a correction: a user telling the
// agent how to behave from now on.
var directiveRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(^|[.!;:]\s+|\n)\s*(always|never|stop|don'?t ever|do not ever|remember( to| that)?|prefer|from now on|that'?s (wrong|not right|incorrect)|no,? (use|do|don'?t))\b`)
})

// IsCorrection reports whether an entry reads as a correction: tagged so,
// or phrased as a standing directive.
func IsCorrection(r Entry) bool {
	return r.Type != notes.TypeRule && (slices.Contains(r.Tags, TagCorrection) || directiveRE().MatchString(r.Content))
}

// PendingRule is a correction not yet accepted as a rule or dismissed,
// with the rules it may contradict.
type PendingRule struct {
	Entry
	Conflicts []Similar `json:"conflicts,omitempty"`
}

// PendingRules lists corrections waiting for a decision, newest first.
// Rules similar to one (cosine ≥ 0.7) are reported as conflicts when the
// model is installed.
func (s *Service) PendingRules(ctx context.Context) ([]PendingRule, error) {
	seen := map[string]bool{}
	var cands []Entry
	add := func(rows []Entry) {
		for _, r := range rows {
			if !seen[r.ID] && IsCorrection(r) && !slices.Contains(r.Tags, TagRuleAccepted) && !slices.Contains(r.Tags, TagRuleDismissed) {
				seen[r.ID] = true
				cands = append(cands, r)
			}
		}
	}
	tagged, err := s.List(ctx, Filter{Tags: []string{TagCorrection}, Limit: 200})
	if err != nil {
		return nil, err
	}
	add(tagged)
	err = s.withCache(ctx, func(c *cache.Cache) error {
		hits, err := c.Search(ctx, "always never stop remember prefer wrong", cache.Filter{Limit: 200})
		for _, h := range hits {
			add([]Entry{entryOf(h.Row)})
		}
		if err == cache.ErrNoWords {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].Created.After(cands[j].Created) })
	out := make([]PendingRule, len(cands))
	for i, r := range cands {
		out[i] = PendingRule{Entry: r}
	}
	if len(out) == 0 {
		return out, nil
	}
	// conflicts need vectors; without a model the list stands alone
	_ = s.withVectors(ctx, func(c *cache.Cache, m Embedder) error {
		rules, rvecs, err := c.VectorRows(ctx, cache.Filter{Types: []notes.Type{notes.TypeRule}, Limit: 500})
		if err != nil || len(rules) == 0 {
			return err
		}
		texts := make([]string, len(out))
		for i, p := range out {
			texts[i] = p.Content
		}
		vecs, err := m.Embed(ctx, texts)
		if err != nil {
			return err
		}
		for i := range out {
			for j, r := range rules {
				if cos := float64(embed.Cosine(vecs[i], rvecs[j])); cos >= conflictCosine {
					out[i].Conflicts = append(out[i].Conflicts, Similar{Entry: entryOf(r), Similarity: cos, How: "vector"})
				}
			}
		}
		return nil
	})
	return out, nil
}

// AcceptRule turns a correction into a rule (related to it) and marks the
// correction accepted. The rule is as private as its correction: a private
// correction gives a private rule, and a shared rule passes the secret scan
// like any save.
func (s *Service) AcceptRule(ctx context.Context, idPrefix string) (notes.Entry, error) {
	d, err := s.Show(ctx, idPrefix)
	if err != nil {
		return notes.Entry{}, err
	}
	rule, err := s.Save(ctx, SaveRequest{Content: d.Content, Type: notes.TypeRule, Tags: []string{"from-correction"}, Related: []string{d.ID}, Private: d.Private})
	if err != nil {
		return rule, err
	}
	_, err = s.Edit(ctx, d.ID, EditRequest{AddTags: []string{TagRuleAccepted}})
	return rule, err
}

// DismissRule marks a correction as not a rule.
func (s *Service) DismissRule(ctx context.Context, idPrefix string) (notes.Op, error) {
	return s.Edit(ctx, idPrefix, EditRequest{AddTags: []string{TagRuleDismissed}})
}

// annotatePatterns labels issue hits that belong to a recurring pattern,
// from the vectors a semantic search has just brought up to date. It
// explores only the hits' own neighbourhoods (breadth-first over the
// similarity links), not every pair of recent issues, so a search stays
// cheap with hundreds of them.
func (s *Service) annotatePatterns(ctx context.Context, c *cache.Cache, hits []Hit) {
	want := map[string]bool{}
	for _, h := range hits {
		if h.Type == notes.TypeIssue && !slices.Contains(h.Tags, TagPatternResolved) {
			want[h.ID] = true
		}
	}
	if len(want) == 0 {
		return
	}
	open, err := s.openIssues(ctx, c)
	if err != nil {
		return
	}
	labels := open.labels
	seen := map[int]bool{}
	for i, r := range open.rows {
		if _, known := labels[r.ID]; !want[r.ID] || seen[i] || known {
			continue
		}
		g := component(open.rows, open.vecs, i, patternCosine, seen)
		for _, m := range g.Entries {
			labels[m.ID] = ""
			if len(g.Entries) >= 3 {
				labels[m.ID] = PatternLabel(g)
			}
		}
	}
	for i := range hits {
		hits[i].Pattern = labels[hits[i].ID]
	}
}

// component returns the group of entries linked to rows[start],
// breadth-first, oldest first; it marks them in seen, so that callers
// exploring several starts visit each group once.
func component(rows []Entry, vecs [][]float32, start int, min float64, seen map[int]bool) Group {
	seen[start] = true
	members := []int{start}
	for k := 0; k < len(members); k++ {
		i := members[k]
		for j := range rows {
			if !seen[j] && similarity(rows, vecs, i, j) >= min {
				seen[j] = true
				members = append(members, j)
			}
		}
	}
	m := make([]Entry, len(members))
	for k, i := range members {
		m[k] = rows[i]
	}
	sortOldestFirst(m)
	return Group{ID: m[0].ID, Entries: m, Since: m[0].Created, Last: m[len(m)-1].Created}
}

func similarity(rows []Entry, vecs [][]float32, i, j int) float64 {
	return float64(embed.Cosine(vecs[i], vecs[j])) + sharedTagBonus*float64(sharedTags(rows[i].Tags, rows[j].Tags))
}

func sortOldestFirst(m []Entry) {
	sort.Slice(m, func(i, j int) bool {
		if !m[i].Created.Equal(m[j].Created) {
			return m[i].Created.Before(m[j].Created)
		}
		return m[i].ID < m[j].ID
	})
}

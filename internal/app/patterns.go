package app

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/embed"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Group is a set of similar entries, oldest first.
type Group struct {
	ID      string    `json:"id"` // the oldest entry's id
	Entries []Entry   `json:"entries"`
	Since   time.Time `json:"since"`
	Last    time.Time `json:"last"`
}

// linked links entries whose similarity (cosine, plus a bonus per shared
// tag) reaches min, and returns the connected groups of at least size as
// the members' indices (groupsOf makes the groups): comparing every pair
// is what costs (about 15 ms for 500 entries), so a long-lived process
// keeps the answer (recentSet.groups).
func linked(rows []Entry, vecs [][]float32, min float64, size int) [][]int {
	seen := make([]bool, len(rows))
	var out [][]int
	for i := range rows {
		if seen[i] {
			continue
		}
		if m := members(rows, vecs, i, min, seen); len(m) >= size {
			out = append(out, m)
		}
	}
	return out
}

// groupsOf builds the groups of rows the index lists name, largest first.
func groupsOf(rows []Entry, idx [][]int) []Group {
	out := make([]Group, len(idx))
	for i, m := range idx {
		out[i] = groupOf(rows, m)
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

// Patterns returns recurring issues: three or more issues of the last 30
// days that are alike (an issue with two or more similar ones), unless the
// pattern was resolved. Needs the embedding model.
func (s *Memory) Patterns(ctx context.Context) ([]Group, error) { return s.patterns(ctx, modelVectors) }

// patterns is Patterns with the vectors of src (see vectorsAtHand);
// storedVectors are read unless a recent issue waits for its vector:
// patterns are found by meaning, and an issue saved without the model (by
// the CLI) joins its pattern here, loading the model once. The issues of every
// pattern found are made longterm (see keepPatterns), whatever saved them.
func (s *core) patterns(ctx context.Context, src vectorSource) ([]Group, error) {
	var out []Group
	find := func(src vectorSource) error {
		return s.vectorsAtHand(ctx, src, func(c *cache.Cache) error {
			var err error
			out, err = s.patternsIn(ctx, c)
			return err
		})
	}
	first := src
	if first == storedVectors && s.issuesWait(ctx) {
		first = modelVectors
	}
	err := find(first)
	if err != nil && src == storedVectors {
		err = find(storedVectors) // no model to load: the vectors at hand
	}
	s.memory().keepPatterns(ctx, out)
	return out, err
}

// patternsIn groups the open issues with stored vectors into patterns.
func (s *core) patternsIn(ctx context.Context, c *cache.Cache) ([]Group, error) {
	open, err := s.openIssues(ctx, c)
	if err != nil {
		return nil, err
	}
	return open.groups(patternCosine, 3), nil
}

// openIssues returns the issues of the last 30 days whose pattern was not
// resolved, with their vectors (and the remembered labels).
func (s *core) openIssues(ctx context.Context, c *cache.Cache) (*recentSet, error) {
	all, err := s.recentVectors(ctx, c, memory.TypeIssue)
	if err != nil {
		return nil, err
	}
	if all.open == nil {
		open := &recentSet{labels: all.labels}
		for i, r := range all.rows {
			if !slices.Contains(r.Tags, TagPatternResolved) {
				open.rows, open.vecs = append(open.rows, r), append(open.vecs, all.vecs[i])
			}
		}
		all.open = open
	}
	return all.open, nil
}

// PatternLabel is how search results and context show a pattern.
func PatternLabel(g Group) string {
	return fmt.Sprintf("[Pattern: seen %d times since %s]", len(g.Entries), g.Since.Local().Format(time.DateOnly))
}

// ResolvePattern marks the pattern that contains the entry idPrefix names
// (or whose id it is) resolved: every issue in it gets the tag
// pattern-resolved, an ordinary edit that syncs. It returns the pattern.
func (s *Memory) ResolvePattern(ctx context.Context, idPrefix string) (Group, error) {
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
func (s *Memory) Consolidation(ctx context.Context) ([]Group, error) {
	return s.consolidation(ctx, modelVectors)
}

// consolidation is Consolidation with the vectors of src (see
// vectorsAtHand).
func (s *core) consolidation(ctx context.Context, src vectorSource) ([]Group, error) {
	var out []Group
	err := s.vectorsAtHand(ctx, src, func(c *cache.Cache) error {
		recent, err := s.recentVectors(ctx, c, memory.TypeIssue, memory.TypeDecision)
		if err != nil {
			return err
		}
		out = recent.groups(consolidationCosine, 3)
		return nil
	})
	return out, err
}

// ConsolidationHowTo tells an agent what to do with a candidate group.
const ConsolidationHowTo = "Write one longterm summary of each group (git synaptic save --tier longterm --related ID... or context_save with related_ids), then archive the originals (git synaptic archive ID... or context_archive)."

// annotatePatterns labels issue hits that belong to a recurring pattern,
// from the vectors a semantic search has just brought up to date. It
// explores only the hits' own neighbourhoods (breadth-first over the
// similarity links), not every pair of recent issues, so a search stays
// cheap with hundreds of them.
func (s *core) annotatePatterns(ctx context.Context, c *cache.Cache, hits []Hit) {
	want := map[string]bool{}
	for _, h := range hits {
		if h.Type == memory.TypeIssue && !slices.Contains(h.Tags, TagPatternResolved) {
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
	seen := make([]bool, len(open.rows))
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
func component(rows []Entry, vecs [][]float32, start int, min float64, seen []bool) Group {
	return groupOf(rows, members(rows, vecs, start, min, seen))
}

// members is component as the members' indices.
func members(rows []Entry, vecs [][]float32, start int, min float64, seen []bool) []int {
	seen[start] = true
	m := []int{start}
	for k := 0; k < len(m); k++ {
		i := m[k]
		for j := range rows {
			if !seen[j] && similarity(rows, vecs, i, j) >= min {
				seen[j] = true
				m = append(m, j)
			}
		}
	}
	return m
}

// groupOf is the group of the rows members names, oldest first.
func groupOf(rows []Entry, members []int) Group {
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

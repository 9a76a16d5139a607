package app

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/embed"
	"github.com/git-synaptic/git-synaptic/internal/directive"
	"github.com/git-synaptic/git-synaptic/memory"
)

// ruleTagPrefix marks a rule's label among its tags ("rule:no-force-push").
const ruleTagPrefix = "rule:"

// Rule is a rule entry with its label ("" when it has none).
type Rule struct {
	Entry
	Label string `json:"label,omitempty"`
}

// ruleTag is the tag that carries label: lower-cased, spaces as dashes.
func ruleTag(label string) (string, error) {
	l := strings.ToLower(strings.Join(strings.Fields(label), "-"))
	tags, err := memory.NormalizeTags([]string{ruleTagPrefix + l})
	if err != nil || l == "" {
		return "", Invalidf("label %q: use letters, digits and ._/+#- (at most 59 characters)", label)
	}
	return tags[0], nil
}

// ruleOf is r with the label its tags carry.
func ruleOf(r Entry) Rule {
	for _, t := range r.Tags {
		if l, ok := strings.CutPrefix(t, ruleTagPrefix); ok {
			return Rule{Entry: r, Label: l}
		}
	}
	return Rule{Entry: r}
}

// RuleRequest is a rule to save.
type RuleRequest struct {
	Label   string // "" or a short name, kept as the tag rule:LABEL
	Content string
	AgentID string
	// Correction, if set, is the correction the rule accepts: the rule
	// links to it and it leaves the pending list.
	Correction string
}

// SaveRule saves a rule. With a correction it accepts that correction:
// the rule keeps its privacy, links to it, and the correction is marked
// accepted.
func (s *Agent) SaveRule(ctx context.Context, req RuleRequest) (Rule, error) {
	save := SaveRequest{Content: req.Content, Type: memory.TypeRule, AgentID: req.AgentID}
	if req.Label != "" {
		tag, err := ruleTag(req.Label)
		if err != nil {
			return Rule{}, err
		}
		save.Tags = append(save.Tags, tag)
	}
	var corr Detail
	if req.Correction != "" {
		err := s.withCache(ctx, func(c *cache.Cache) error {
			var err error
			corr, err = detailIn(ctx, c, req.Correction)
			return err
		})
		if err != nil {
			return Rule{}, fmt.Errorf("correction %s: %w", req.Correction, err)
		}
		if save.Content == "" {
			save.Content = corr.Content
		}
		save.Tags = append(save.Tags, "from-correction")
		save.Related, save.Private = []string{corr.ID}, corr.Private
	}
	if !save.Private && req.Label != "" {
		if err := s.checkAsGiven("label", []string{req.Label}, false); err != nil {
			return Rule{}, err
		}
	}
	e, err := s.memory().Save(ctx, save)
	if err != nil {
		return Rule{}, err
	}
	if req.Correction != "" {
		if _, err := s.memory().Edit(ctx, corr.ID, EditRequest{AddTags: []string{TagRuleAccepted}}); err != nil {
			return Rule{}, fmt.Errorf("rule %s saved, but correction %s not marked accepted: %w", short(e.ID), short(corr.ID), err)
		}
	}
	return ruleOf(Entry{State: memory.State{Entry: e}}), nil
}

// Rules lists the rules in force (not archived), newest first, at most
// limit (0: all).
func (s *Agent) Rules(ctx context.Context, limit int) ([]Rule, error) {
	rows, err := s.recall().List(ctx, Filter{Types: []memory.Type{memory.TypeRule}, Limit: limit})
	out := make([]Rule, len(rows))
	for i, r := range rows {
		out[i] = ruleOf(r)
	}
	return out, err
}

// DeleteRules archives the rules a label or an id names (history keeps
// them) and returns their ids.
func (s *Agent) DeleteRules(ctx context.Context, which string) ([]string, error) {
	var ids []string
	if tag, err := ruleTag(which); err == nil {
		rows, err := s.recall().List(ctx, Filter{Types: []memory.Type{memory.TypeRule}, Tags: []string{tag}})
		if err != nil {
			return nil, err
		}
		for _, x := range rows {
			ids = append(ids, x.ID)
		}
	}
	if len(ids) == 0 {
		d, err := s.recall().Show(ctx, which)
		if err != nil {
			return nil, fmt.Errorf("no rule labelled or identified by %q: %w", which, err)
		}
		if d.Type != memory.TypeRule {
			return nil, Invalidf("%s is a %s, not a rule", d.ID, d.Type)
		}
		ids = []string{d.ID}
	}
	for _, id := range ids {
		if _, err := s.memory().SetArchived(ctx, id, true); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// IsCorrection reports whether an entry reads as a correction: tagged so,
// or phrased as a standing directive.
func IsCorrection(r Entry) bool {
	tagged := slices.Contains(r.Tags, TagCorrection) && r.Type != memory.TypeRule
	return tagged || (slices.Contains(correctionTypes, r.Type) && directive.Is(r.Content, r.Type))
}

// PendingRule is a correction not yet accepted as a rule or dismissed,
// with the rules it may contradict.
type PendingRule struct {
	Entry
	Conflicts []Similar `json:"conflicts,omitempty"`
}

// directiveTemplates are sentences a directive reads like (the seed's,
// generalised); with the model, an entry whose embedding is within
// directiveCosine of one is a directive whatever its words.
var directiveTemplates = []string{
	"always do it this way", "never do that", "stop doing that", "remember to do this",
	"please remember to do this going forward", "I prefer this approach instead",
	"that's wrong, do it differently", "from now on, do this", "don't do that again",
	"you should do it this way instead",
}

// directiveCosine is the seed's threshold. With USE-lite it recognises
// close paraphrases of a template only; the words catch the rest.
const directiveCosine = 0.75

// directivesByMeaning finds the recent entries that read like a directive
// template, from the vectors of the entries and of the templates: with
// modelVectors, the model's (embedding what waits); with storedVectors,
// those the cache stores, so that a session start finds what rules
// pending finds. With none stored, it finds none: the words stand alone.
func (s *core) directivesByMeaning(ctx context.Context, src vectorSource) []Entry {
	var out []Entry
	find := func(c *cache.Cache, tvecs [][]float32) error {
		rows, vecs, err := c.VectorRows(ctx, cache.Filter{Types: correctionTypes, Limit: 500})
		for i, r := range rows {
			for _, t := range tvecs {
				if t != nil && embed.Cosine(vecs[i], t) >= directiveCosine {
					out = append(out, entryOf(r))
					break
				}
			}
		}
		return err
	}
	if src == modelVectors {
		_ = s.withVectors(ctx, func(c *cache.Cache, m Embedder) error {
			tvecs, err := c.TextVectors(ctx, directiveTemplates) // withVectors stored them
			if err != nil {
				return err
			}
			return find(c, tvecs)
		})
		return out
	}
	_ = s.withCache(ctx, func(c *cache.Cache) error {
		if ok, err := c.UseStoredModel(ctx); !ok || err != nil {
			return err
		}
		tvecs, err := c.TextVectors(ctx, directiveTemplates)
		if err != nil {
			return err
		}
		return find(c, tvecs)
	})
	return out
}

// correctionTypes are the entry types a correction may be saved as.
// Issues and progress notes are left out: "Use the fake clock" in an
// issue is its fix, not an instruction to the agent.
var correctionTypes = []memory.Type{memory.TypeInsight, memory.TypeDecision, memory.TypeReference}

// PendingRules lists corrections waiting for a decision, newest first.
// Rules similar to one (cosine ≥ 0.7) are reported as conflicts when the
// model is installed.
func (s *Agent) PendingRules(ctx context.Context) ([]PendingRule, error) {
	return s.pendingRules(ctx, modelVectors)
}

// pendingRules is PendingRules; with storedVectors, and where no model
// is loaded yet, it reads stored vectors only: directives are found by
// meaning among the entries with a vector, and conflicts for the
// corrections that have one.
// Loading the model costs a session start about 300 ms.
func (s *core) pendingRules(ctx context.Context, src vectorSource) ([]PendingRule, error) {
	if s.model.loaded() != nil {
		src = modelVectors // loaded already
	}
	key := s.derivedKey(ctx, src)
	if key != "" && s.rulesMemo.key == key {
		return clonePending(s.rulesMemo.rules), nil
	}
	cands, err := s.findRuleCandidates(ctx, src)
	if err != nil {
		return nil, err
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].Created.After(cands[j].Created) })
	out := make([]PendingRule, len(cands))
	for i, r := range cands {
		out[i] = PendingRule{Entry: r}
	}
	if len(out) > 0 {
		s.findConflicts(ctx, out, src)
	}
	if key != "" {
		s.rulesMemo.key, s.rulesMemo.rules = key, clonePending(out)
	}
	return out, nil
}

// clonePending copies rules deep enough that a caller appending to one's
// conflicts leaves the memo as it was.
func clonePending(rules []PendingRule) []PendingRule {
	out := slices.Clone(rules)
	for i := range out {
		out[i].Conflicts = slices.Clone(out[i].Conflicts)
	}
	return out
}

// rulesMemo is pendingRules' last answer in a long-lived process, and
// the derivedKey it holds for: reading the 500 newest entries and their
// vectors for directives costs a session start about 30 ms at 10k
// entries, reading up to 500 rules' vectors for conflicts 2 ms at 300k,
// and their answer changes only with memory.
type rulesMemo struct {
	key   string
	rules []PendingRule
}

// derivedKey names the state of memory that what is derived from entries
// and vectors depends on: the cache's Stamp, HEAD (which entries are on
// this line), and how (with the model loaded or not); "" outside a
// long-lived process, or when it cannot tell, so that nothing is kept.
func (s *core) derivedKey(ctx context.Context, how ...any) string {
	if !s.longLived {
		return ""
	}
	var key string
	err := s.withCache(ctx, func(c *cache.Cache) error {
		stamp, err := c.Stamp(ctx)
		head, _ := s.repo.Head() // zero on an unborn branch
		key = fmt.Sprint(stamp, "/", head, "/", how)
		return err
	})
	if err != nil {
		return ""
	}
	return key
}

// findRuleCandidates gathers the corrections and directives no rule covers
// yet: tagged corrections, recent entries that read as one, and (from the
// vectors of src) directives found by meaning.
func (s *core) findRuleCandidates(ctx context.Context, src vectorSource) ([]Entry, error) {
	seen := map[string]bool{}
	var cands []Entry
	add := func(rows []Entry, byMeaning bool) {
		for _, r := range rows {
			if !seen[r.ID] && (byMeaning || IsCorrection(r)) && !slices.Contains(r.Tags, TagRuleAccepted) && !slices.Contains(r.Tags, TagRuleDismissed) {
				seen[r.ID] = true
				cands = append(cands, r)
			}
		}
	}
	tagged, err := s.recall().List(ctx, Filter{Tags: []string{TagCorrection}, Limit: 200})
	if err != nil {
		return nil, err
	}
	add(tagged, false)
	// directives without the tag: read the recent entries themselves (a
	// keyword search missed "From now on, use pnpm")
	recent, err := s.recall().List(ctx, Filter{Types: correctionTypes, Limit: 500})
	if err != nil {
		return nil, err
	}
	add(recent, false)
	add(s.directivesByMeaning(ctx, src), true)
	return s.withoutRule(ctx, cands)
}

// findConflicts notes, for each pending rule, the rules it contradicts by
// meaning. It needs vectors: with modelVectors it embeds the texts, else
// it reads stored ones; without either the list stands alone.
func (s *core) findConflicts(ctx context.Context, out []PendingRule, src vectorSource) {
	conflicts := func(c *cache.Cache, vecs [][]float32) error {
		rules, rvecs, err := c.VectorRows(ctx, cache.Filter{Types: []memory.Type{memory.TypeRule}, Limit: 500})
		if err != nil || len(rules) == 0 {
			return err
		}
		for i := range out {
			if vecs[i] == nil {
				continue
			}
			for j, r := range rules {
				if slices.Contains(r.RelatedIDs, out[i].ID) || r.Content == out[i].Content {
					continue // the rule made of this correction
				}
				if cos := float64(embed.Cosine(vecs[i], rvecs[j])); cos >= conflictCosine {
					out[i].Conflicts = append(out[i].Conflicts, Similar{Entry: entryOf(r), Similarity: cos, How: "vector"})
				}
			}
		}
		return nil
	}
	if src == modelVectors {
		_ = s.withVectors(ctx, func(c *cache.Cache, m Embedder) error {
			texts := make([]string, len(out))
			for i, p := range out {
				texts[i] = p.Content
			}
			vecs, err := m.Embed(ctx, texts)
			if err != nil {
				return err
			}
			return conflicts(c, vecs)
		})
		return
	}
	_ = s.withCache(ctx, func(c *cache.Cache) error {
		if ok, err := c.UseStoredModel(ctx); !ok || err != nil {
			return err
		}
		ids := make([]string, len(out))
		for i, p := range out {
			ids[i] = p.ID
		}
		byID, err := c.VectorsOf(ctx, ids)
		if err != nil {
			return err
		}
		vecs := make([][]float32, len(out))
		for i, p := range out {
			vecs[i] = byID[p.ID]
		}
		return conflicts(c, vecs)
	})
}

// withoutRule drops the corrections a rule already links to (accepted by
// a rule saved with its id, or by a teammate whose tag has not synced).
// The rules are read once: looking up each correction's backlinks scans
// every entry per correction.
func (s *core) withoutRule(ctx context.Context, cands []Entry) ([]Entry, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	var out []Entry
	err := s.withCache(ctx, func(c *cache.Cache) error {
		rules, err := c.List(ctx, cache.Filter{Types: []memory.Type{memory.TypeRule}})
		if err != nil {
			return err
		}
		linked := map[string]bool{}
		for _, r := range rules {
			for _, id := range r.RelatedIDs {
				linked[id] = true
			}
		}
		for _, r := range cands {
			if !linked[r.ID] {
				out = append(out, r)
			}
		}
		return nil
	})
	return out, err
}

// AcceptRule turns a correction into a rule (related to it) and marks the
// correction accepted. The rule is as private as its correction: a private
// correction gives a private rule, and a shared rule passes the secret scan
// like any save.
func (s *Agent) AcceptRule(ctx context.Context, idPrefix, label string) (Rule, error) {
	return s.SaveRule(ctx, RuleRequest{Label: label, Correction: idPrefix})
}

// DismissRule marks a correction as not a rule.
func (s *Agent) DismissRule(ctx context.Context, idPrefix string) (memory.Op, error) {
	return s.memory().Edit(ctx, idPrefix, EditRequest{AddTags: []string{TagRuleDismissed}})
}

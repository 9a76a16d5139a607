package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-synaptic/git-synaptic/notes"
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
	tags, err := notes.NormalizeTags([]string{ruleTagPrefix + l})
	if err != nil || l == "" {
		return "", fmt.Errorf("%w: label %q: use letters, digits and ._/+#- (at most 59 characters)", notes.ErrInvalid, label)
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

// SaveRule saves content as a rule under label (its tag rule:LABEL).
func (s *Service) SaveRule(ctx context.Context, label, content, agent string) (Rule, error) {
	tag, err := ruleTag(label)
	if err != nil {
		return Rule{}, err
	}
	e, err := s.Save(ctx, SaveRequest{Content: content, Type: notes.TypeRule, Tags: []string{tag}, AgentID: agent})
	if err != nil {
		return Rule{}, err
	}
	return ruleOf(Entry{State: notes.State{Entry: e}}), nil
}

// Rules lists the rules in force (not archived), newest first, at most
// limit (0: all).
func (s *Service) Rules(ctx context.Context, limit int) ([]Rule, error) {
	rows, err := s.List(ctx, Filter{Types: []notes.Type{notes.TypeRule}, Limit: limit})
	out := make([]Rule, len(rows))
	for i, r := range rows {
		out[i] = ruleOf(r)
	}
	return out, err
}

// DeleteRules archives the rules a label or an id names (history keeps
// them) and returns their ids.
func (s *Service) DeleteRules(ctx context.Context, which string) ([]string, error) {
	var ids []string
	if tag, err := ruleTag(which); err == nil {
		rows, err := s.List(ctx, Filter{Types: []notes.Type{notes.TypeRule}, Tags: []string{tag}})
		if err != nil {
			return nil, err
		}
		for _, x := range rows {
			ids = append(ids, x.ID)
		}
	}
	if len(ids) == 0 {
		d, err := s.Show(ctx, which)
		if err != nil {
			return nil, fmt.Errorf("no rule labelled or identified by %q: %w", which, err)
		}
		if d.Type != notes.TypeRule {
			return nil, fmt.Errorf("%w: %s is a %s, not a rule", notes.ErrInvalid, d.ID, d.Type)
		}
		ids = []string{d.ID}
	}
	for _, id := range ids {
		if _, err := s.SetArchived(ctx, id, true); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

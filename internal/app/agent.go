package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/git-synaptic/git-synaptic/internal/lockfile"
	"github.com/git-synaptic/git-synaptic/memory"
)

// DistillLabel labels the rule that tells agents to save what they learn.
const DistillLabel = "auto-distill"

// DistillRule is that rule's text (the v0.5.0 seed's auto-distill rule).
const DistillRule = `Save to project memory as you work, without being asked: decisions and why (type decision), corrections and preferences the user gives you, tagged correction, bugs with their root cause and fix (type issue), and what you learn about this codebase (type insight). One short, specific entry per fact; never secrets. Search memory before deciding what the team may have decided already.`

// EnsureDistillRule saves the auto-distill rule, which session starts
// show every agent, unless a rule of that label exists or existed (a
// deleted one stays deleted). It says what it did, or "" when nothing.
// Two inits at once save it once: the look and the save hold a lock.
func (s *Agent) EnsureDistillRule(ctx context.Context) (string, error) {
	unlock, err := lockfile.Lock(filepath.Join(s.repo.CommonDir(), "synaptic", "distill-rule.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	s.stale() // what another init saved while this one waited
	had, err := s.recall().List(ctx, Filter{Types: []memory.Type{memory.TypeRule}, Tags: []string{ruleTagPrefix + DistillLabel}, IncludeArchived: true, Limit: 1})
	if err != nil || len(had) > 0 {
		return "", err
	}
	rule, err := s.SaveRule(ctx, RuleRequest{Label: DistillLabel, Content: DistillRule, AgentID: "git-synaptic"})
	if err != nil {
		return "", fmt.Errorf("save the %s rule: %w", DistillLabel, err)
	}
	return fmt.Sprintf("rule %s %s: agents save decisions, corrections and learnings as they work (git synaptic edit %s to change it, git synaptic delete %s to drop it)",
		DistillLabel, ShortID(rule.ID), ShortID(rule.ID), ShortID(rule.ID)), nil
}

package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/git-synaptic/git-synaptic/internal/atomicfile"
	"github.com/git-synaptic/git-synaptic/notes"

	"github.com/git-synaptic/git-synaptic/internal/regular"
)

// mcpServerEntry is how an MCP client starts git-synaptic's server.
var mcpServerEntry = map[string]any{"command": "git-synaptic", "args": []any{"mcp"}}

// claudeHooks are the Claude Code hook events git-synaptic answers, with
// the command each runs.
var claudeHooks = []struct{ event, command string }{
	{"SessionStart", "git-synaptic hook session-start"},
	{"UserPromptSubmit", "git-synaptic hook prompt"},
	{"PostToolUse", "git-synaptic hook tool"},
	{"Stop", "git-synaptic hook stop"},
	{"PreCompact", "git-synaptic hook pre-compact"},
}

// DistillLabel labels the rule that tells agents to save what they learn.
const DistillLabel = "auto-distill"

// distillRule is that rule's text (the v0.5.0 seed's auto-distill rule).
const distillRule = `Save to project memory as you work, without being asked: decisions and why (type decision), corrections and preferences the user gives you, tagged correction, bugs with their root cause and fix (type issue), and what you learn about this codebase (type insight). One short, specific entry per fact; never secrets. Search memory before deciding what the team may have decided already.`

// ConfigureAgent registers git-synaptic with a coding agent's project
// configuration. For "claude" it adds the MCP server to .mcp.json and the
// session-start, prompt, tool, stop and pre-compact hooks to .claude/settings.json, at
// the top of the working tree, keeping every other setting as it was, and
// saves the auto-distill rule unless a rule of that label exists or
// existed (a deleted one stays deleted). It reports what it changed.
func (s *Agent) ConfigureAgent(ctx context.Context, agent string) ([]string, error) {
	if agent != "claude" {
		return nil, fmt.Errorf("%w: unknown agent %q (supported: claude; other MCP clients: run 'git-synaptic mcp' as a stdio server)", notes.ErrInvalid, agent)
	}
	if s.repo.WorkTree() == "" {
		return nil, fmt.Errorf("%w: a bare repository has no working tree for agent settings", notes.ErrInvalid)
	}
	var changes []string
	for _, f := range []struct {
		path  string
		merge func(map[string]any) (bool, error)
	}{
		{filepath.Join(s.repo.WorkTree(), ".mcp.json"), addMCPServer},
		{filepath.Join(s.repo.WorkTree(), ".claude", "settings.json"), addClaudeHooks},
	} {
		changed, err := mergeJSONFile(f.path, f.merge)
		if err != nil {
			return changes, err
		}
		if changed {
			changes = append(changes, "updated "+f.path)
		}
	}
	had, err := s.recall().List(ctx, Filter{Types: []notes.Type{notes.TypeRule}, Tags: []string{ruleTagPrefix + DistillLabel}, IncludeArchived: true, Limit: 1})
	if err != nil || len(had) > 0 {
		return changes, err
	}
	rule, err := s.SaveRule(ctx, RuleRequest{Label: DistillLabel, Content: distillRule, AgentID: "git-synaptic"})
	if err != nil {
		return changes, fmt.Errorf("save the %s rule: %w", DistillLabel, err)
	}
	return append(changes, fmt.Sprintf("rule %s %s: agents save decisions, corrections and learnings as they work (git synaptic edit %s to change it, git synaptic delete %s to drop it)",
		DistillLabel, ShortID(rule.ID), ShortID(rule.ID), ShortID(rule.ID))), nil
}

// maxSettings bounds an agent's settings file read by init.
const maxSettings = 16 << 20

// mergeJSONFile applies merge to the JSON object in path (created if
// missing) and writes it back atomically when it changed. A file that is
// not a JSON object is reported and left untouched.
func mergeJSONFile(path string, merge func(map[string]any) (bool, error)) (bool, error) {
	doc := map[string]any{}
	b, err := regular.ReadFile(path, maxSettings)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return false, err
	default:
		if err := json.Unmarshal(b, &doc); err != nil {
			return false, fmt.Errorf("%w: %s is not valid JSON (%v); fix it or move it aside, nothing was changed", notes.ErrInvalid, path, err)
		}
	}
	changed, err := merge(doc)
	if err != nil || !changed {
		if err != nil {
			err = fmt.Errorf("%w: %s: %v; nothing was changed", notes.ErrInvalid, path, err)
		}
		return false, err
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	if err := atomicfile.Write(path, append(out, '\n'), 0o644); err != nil {
		return false, err
	}
	return true, nil
}

// childObject is the JSON object under key in doc, a new empty one when
// the key is absent, or an error when something else is there.
func childObject(doc map[string]any, key string) (map[string]any, error) {
	v, exists := doc[key]
	if !exists {
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not an object", key)
	}
	return m, nil
}

// addMCPServer adds git-synaptic to the mcpServers of a .mcp.json document.
func addMCPServer(doc map[string]any) (bool, error) {
	servers, err := childObject(doc, "mcpServers")
	if err != nil {
		return false, err
	}
	if cur, ok := servers["git-synaptic"]; ok {
		a, _ := json.Marshal(cur)
		w, _ := json.Marshal(mcpServerEntry)
		if bytes.Equal(a, w) {
			return false, nil
		}
	}
	servers["git-synaptic"] = mcpServerEntry
	doc["mcpServers"] = servers
	return true, nil
}

// addClaudeHooks adds git-synaptic's hooks to Claude Code settings
// ({"hooks": {"SessionStart": [{"hooks": [{"type": "command", ...}]}]}}),
// each unless a hook already runs its command.
func addClaudeHooks(doc map[string]any) (bool, error) {
	hooks, err := childObject(doc, "hooks")
	if err != nil {
		return false, err
	}
	changed := false
	for _, want := range claudeHooks {
		groups, ok := hooks[want.event].([]any)
		if !ok && hooks[want.event] != nil {
			return false, fmt.Errorf("hooks.%s is not a list", want.event)
		}
		if hasCommand(groups, want.command) {
			continue
		}
		hooks[want.event] = append(groups, map[string]any{"hooks": []any{map[string]any{"type": "command", "command": want.command}}})
		changed = true
	}
	doc["hooks"] = hooks
	return changed, nil
}

func hasCommand(groups []any, command string) bool {
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		list, _ := gm["hooks"].([]any)
		for _, h := range list {
			if hm, _ := h.(map[string]any); hm != nil && hm["command"] == command {
				return true
			}
		}
	}
	return false
}

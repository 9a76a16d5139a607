package agents

import (
	"strings"
	"testing"
)

// The table is consistent: names are unique, an agent reads context only
// from events it has a hook for, and every event name is the agent's own.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range All {
		if seen[a.Name] || a.Name != strings.ToLower(a.Name) || a.Title == "" {
			t.Errorf("agent %q: duplicate, not lower case, or untitled", a.Name)
		}
		seen[a.Name] = true
		for e := range a.Context {
			if !a.HasHook(e) {
				t.Errorf("%s reads context from %s, which it has no hook for", a.Name, e)
			}
		}
		for e, name := range a.Hooks {
			if !e.Valid() || name == "" {
				t.Errorf("%s: event %q named %q", a.Name, e, name)
			}
		}
	}
	if a, err := Lookup("Codex"); err != nil || a.Name != "codex" {
		t.Fatalf("Lookup(Codex): %v %v", a, err)
	}
	if _, err := Lookup("vim"); err == nil || !strings.Contains(err.Error(), "claude, codex, cursor, gemini, opencode, vscode") {
		t.Fatalf("Lookup(vim): %v", err)
	}
}

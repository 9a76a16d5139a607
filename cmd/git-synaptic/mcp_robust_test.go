package main_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// A long-lived MCP server keeps saving and finding memory while git gc and
// git repack move every object into new packs (the repro: gc and a
// save, three times).
func TestMCPServerWritesAfterGitGC(t *testing.T) {
	dir := testrepo.NewRepo(t)
	c := startMCP(t, dir)
	for i := 0; i < 3; i++ {
		testrepo.Git(t, dir, "gc", "-q")
		r := c.tool("context_save", map[string]any{"content": fmt.Sprintf("saved after gc number %d", i)})
		if r.IsError {
			t.Fatalf("save after gc %d: %s", i, r.Content[0].Text)
		}
		testrepo.Git(t, dir, "repack", "-a", "-d", "-q")
		r = c.tool("context_search", map[string]any{"query": fmt.Sprintf("gc number %d", i), "mode": "bm25"})
		if r.IsError || !strings.Contains(r.Content[0].Text, fmt.Sprintf("number %d", i)) {
			t.Fatalf("search after repack %d: %+v", i, r)
		}
	}
	testrepo.Git(t, dir, "fsck", "--strict", "--no-progress")
}

// Arguments of the wrong type are a tool error naming the argument, not a
// silent default.
func TestMCPRefusesArgumentsOfTheWrongType(t *testing.T) {
	dir := testrepo.NewRepo(t)
	c := startMCP(t, dir)
	for _, tc := range []struct {
		tool string
		args map[string]any
		arg  string
	}{
		{"context_save", map[string]any{"content": "x", "pinned": "yes"}, "pinned"},
		{"context_save", map[string]any{"content": "x", "tags": "a,b"}, "tags"},
		{"context_save", map[string]any{"content": "x", "tags": []any{"a", 3}}, "tags"},
		{"context_search", map[string]any{"query": "x", "limit": "ten"}, "limit"},
		{"context_save", map[string]any{"content": 42}, "content"},
	} {
		r := c.tool(tc.tool, tc.args)
		if !r.IsError || !strings.Contains(r.Content[0].Text, `"`+tc.arg+`"`) {
			t.Errorf("%s %v: want a tool error naming %q, got %+v", tc.tool, tc.args, tc.arg, r)
		}
	}
	if n := len(listJSON(t, dir)); n != 0 {
		t.Fatalf("refused calls saved %d entries", n)
	}
}

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/git-synaptic/git-synaptic/internal/testrepo/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// The tools an agent is offered, their descriptions and argument schemas,
// against a golden file: what an agent reads to choose a tool changes
// only on purpose. go test -run TestGoldenTools -update rewrites it.
func TestGoldenTools(t *testing.T) {
	sess, err := app.OpenSession(testrepo.NewRepo(t), app.Options{Warn: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	srv := New(sess, "test")
	ctx := context.Background()
	srv.HandleMessage(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}`))
	resp, err := json.Marshal(srv.HandleMessage(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)))
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Result struct {
			Tools json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(resp, &list); err != nil || len(list.Result.Tools) == 0 {
		t.Fatalf("tools/list: %s (%v)", resp, err)
	}
	var got bytes.Buffer
	if err := json.Indent(&got, list.Result.Tools, "", "  "); err != nil {
		t.Fatal(err)
	}
	got.WriteByte('\n')
	path := filepath.Join("testdata", "tools.json")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestGoldenTools -update writes it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("tools/list differs from %s (go test -run TestGoldenTools -update after checking it):\n%s", path, got.String())
	}
}

// What an agent reads back from the tools, against a golden file: the
// calls run in order on one server over a repository of five fixed
// entries, with the golden clock; each prints its arguments, its text
// and whether it is a tool error. go test -run TestGoldenCalls -update
// rewrites it.
func TestGoldenCalls(t *testing.T) {
	dir := golden.Repo(t)
	sess, err := app.OpenSession(dir, app.Options{Warn: os.Stderr, Session: "golden", Now: func() time.Time { return golden.Now }})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	srv := New(sess, "test")
	h := func(ctx context.Context, m json.RawMessage) any { return srv.HandleMessage(ctx, m) }
	call(t, h, 1, "initialize", map[string]any{"protocolVersion": "2025-03-26", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "0"}})
	var got strings.Builder
	for i, c := range []struct {
		tool string
		args map[string]any
	}{
		{"context_search", map[string]any{"query": "postgres backoff", "mode": "bm25", "limit": 3}},
		{"context_list", map[string]any{"type": "issue"}},
		{"context_pin", map[string]any{"id": "3f2a"}},
		{"context_archive", map[string]any{"ids": []string{"3f2a", "c6f8"}}},
		{"context_list", map[string]any{}},
		// bad calls: tool errors, and the server goes on
		{"context_search", map[string]any{"query": "x", "mode": "fuzzy"}},
		{"context_search", map[string]any{"query": 5}},
		{"context_search", map[string]any{"query": "!!!", "mode": "bm25"}},
		{"context_save", map[string]any{"content": ""}},
		{"context_save", map[string]any{"content": "a note", "type": "nosuch"}},
		{"context_pin", map[string]any{"id": "ffff"}},
		{"context_delete", map[string]any{"id": "3f2a"}},
		{"context_list", map[string]any{"tier": "forever"}},
	} {
		args, _ := json.Marshal(c.args)
		text, isErr := call(t, h, i+2, "tools/call", map[string]any{"name": c.tool, "arguments": c.args})
		fmt.Fprintf(&got, "> %s %s\n", c.tool, args)
		if isErr {
			got.WriteString("[tool error]\n")
		}
		got.WriteString(strings.ReplaceAll(text, dir, "$REPO") + "\n")
	}
	path := filepath.Join("testdata", "calls.txt")
	if *update {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestGoldenCalls -update writes it)", err)
	}
	if got.String() != string(want) {
		t.Errorf("tool results differ from %s (go test -run TestGoldenCalls -update after checking it):\n%s", path, got.String())
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// context_verify lists memory whose files changed, search marks it, and
// confirm makes it current again.
func TestVerifyTool(t *testing.T) {
	dir := testrepo.NewRepo(t)
	write := func(body, msg string) {
		os.MkdirAll(filepath.Join(dir, "billing"), 0o755)
		os.WriteFile(filepath.Join(dir, "billing", "retry.go"), []byte(body), 0o644)
		testrepo.Git(t, dir, "add", "-A")
		testrepo.Git(t, dir, "commit", "-q", "-m", msg)
	}
	write("package billing // 1 4 16\n", "billing")
	sess, err := app.OpenSession(dir, app.Options{Warn: os.Stderr, Model: "no-such-model"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	srv := New(sess, "test")
	h := func(ctx context.Context, m json.RawMessage) any { return srv.HandleMessage(ctx, m) }
	rpc(t, h, "initialize", map[string]any{"protocolVersion": "2025-03-26", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "0"}}, &map[string]any{})
	text, isErr := call(t, h, 2, "tools/call", map[string]any{"name": "context_save", "arguments": map[string]any{"content": "retries live in billing/retry.go and back off 1/4/16 s", "type": "decision"}})
	if isErr {
		t.Fatal(text)
	}
	write("package billing // 2 8\n", "retry: back off 2/8")

	text, isErr = call(t, h, 3, "tools/call", map[string]any{"name": "context_verify", "arguments": map[string]any{}})
	if isErr || !strings.Contains(text, "1 of 1 entries naming files changed") || !strings.Contains(text, "[billing/retry.go changed in 1 commit since]") || !strings.Contains(text, "retry: back off 2/8") {
		t.Fatalf("verify: %s", text)
	}
	text, _ = call(t, h, 4, "tools/call", map[string]any{"name": "context_search", "arguments": map[string]any{"query": "retries back off"}})
	if !strings.Contains(text, "[billing/retry.go changed in 1 commit since]") {
		t.Errorf("search does not mark the stale entry: %s", text)
	}
	if text, isErr := call(t, h, 5, "tools/call", map[string]any{"name": "context_verify", "arguments": map[string]any{"confirm": true}}); !isErr {
		t.Errorf("confirm without ids: %s", text)
	}
	id := strings.Fields(text[strings.Index(text, "\n[")+2:])[0]
	id = strings.TrimSuffix(id, "]")
	if text, isErr := call(t, h, 6, "tools/call", map[string]any{"name": "context_verify", "arguments": map[string]any{"confirm": true, "ids": []string{id}}}); isErr {
		t.Fatal(text)
	}
	text, _ = call(t, h, 7, "tools/call", map[string]any{"name": "context_verify", "arguments": map[string]any{}})
	if !strings.Contains(text, "0 of 1 entries") {
		t.Errorf("after confirm: %s", text)
	}
}

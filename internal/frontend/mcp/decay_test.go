package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/frontend/agenthook"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// An entry an agent saves with tier "ephemeral" expires like any
// ephemeral entry: ten unused days later the session-start hook's
// maintenance archives it and context_list no longer shows it; a
// longterm one stays.
func TestExplicitEphemeralExpires(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	dir := testrepo.NewRepo(t)
	sess, err := app.OpenSession(dir, app.Options{Warn: os.Stderr, Session: "sess-decay", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	srv := New(sess, "test")
	// another process's view, for checks beside the server
	svc, err := app.Open(dir, app.Options{Warn: os.Stderr, Session: "sess-decay", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	h := func(ctx context.Context, m json.RawMessage) any { return srv.HandleMessage(ctx, m) }
	call(t, h, 1, "initialize", map[string]any{"protocolVersion": "2025-03-26", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "0"}})
	tool := func(id int, name string, args map[string]any) string {
		text, isErr := call(t, h, id, "tools/call", map[string]any{"name": name, "arguments": args})
		if isErr {
			t.Fatalf("%s: %s", name, text)
		}
		return text
	}
	tool(2, "context_save", map[string]any{"content": "scratch: the flaky test passes with -count=1", "type": "insight", "tier": "ephemeral"})
	tool(3, "context_save", map[string]any{"content": "keep: the release checklist lives in RELEASING.md", "type": "insight", "tier": "longterm"})
	now = now.AddDate(0, 0, 10)
	var out bytes.Buffer
	if err := agenthook.Run(context.Background(), svc.Agent(), agenthook.Request{Name: "session-start", Input: agenthook.Input{SessionID: "s2"}, Markdown: true}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "1 archived") {
		t.Errorf("the session start did not report the expiry:\n%s", out.String())
	}
	list := tool(4, "context_list", map[string]any{})
	if strings.Contains(list, "scratch:") || !strings.Contains(list, "keep:") {
		t.Errorf("after ten idle days:\n%s", list)
	}
}

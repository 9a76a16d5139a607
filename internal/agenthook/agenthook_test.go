package agenthook

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/git-synaptic/git-synaptic/notes"
)

func TestMain(m *testing.M) { testrepo.Main(m) }

func open(t *testing.T) *app.Service {
	t.Helper()
	s, err := app.Open(testrepo.NewRepo(t), app.Options{Warn: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The hooks answer the way Claude Code reads them: session-start and
// prompt print hook JSON with the event name and the context; markdown
// prints the context alone; stop prints nothing and keeps a handoff.
func TestHooksSpeakClaudeCodesJSON(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	if _, err := s.Memory().Save(ctx, app.SaveRequest{Content: "we chose postgres for billing", Type: notes.TypeDecision, SessionID: "sess-1"}); err != nil {
		t.Fatal(err)
	}
	in := ReadInput(strings.NewReader(`{"session_id":"sess-1","hook_event_name":"SessionStart","cwd":"/x"}`))
	if in.SessionID != "sess-1" {
		t.Fatalf("session id %q", in.SessionID)
	}

	var out bytes.Buffer
	if err := Run(ctx, s.Agent(), Request{Name: "session-start", Input: in, Format: Claude}, &out); err != nil {
		t.Fatal(err)
	}
	var got struct {
		HookSpecificOutput struct {
			HookEventName, AdditionalContext string
		}
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if got.HookSpecificOutput.HookEventName != "SessionStart" || !strings.Contains(got.HookSpecificOutput.AdditionalContext, "postgres for billing") {
		t.Fatalf("session-start answer: %+v", got)
	}

	out.Reset()
	if err := Run(ctx, s.Agent(), Request{Name: "session-start", Input: in, Format: Markdown}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "# Project memory") {
		t.Fatalf("markdown answer: %q", out.String())
	}

	out.Reset()
	if err := Run(ctx, s.Agent(), Request{Name: "stop", Input: in, Format: Claude}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Fatalf("stop printed %q", out.String())
	}
	handoffs, err := s.Recall().List(ctx, app.Filter{Types: []notes.Type{notes.TypeHandoff}})
	if err != nil || len(handoffs) != 1 || handoffs[0].SessionID != "sess-1" {
		t.Fatalf("handoffs after stop: %+v, %v", handoffs, err)
	}
}

// Input that is missing or not JSON gives no session; an unknown hook or
// format is an error, never a panic.
func TestBadInput(t *testing.T) {
	for _, s := range []string{"", "not json", `{"session_id": 7}`, strings.Repeat("[", 2<<20)} {
		if in := ReadInput(strings.NewReader(s)); in.SessionID != "" {
			t.Errorf("%.20q: session %q", s, in.SessionID)
		}
	}
	if in := ReadInput(nil); in != (Input{}) {
		t.Errorf("nil reader: %+v", in)
	}
	if _, err := ParseFormat("xml"); err == nil {
		t.Error("format xml accepted")
	}
	if err := Run(context.Background(), open(t).Agent(), Request{Name: "post-commit"}, &bytes.Buffer{}); err == nil {
		t.Error("post-commit accepted as an agent hook")
	}
}

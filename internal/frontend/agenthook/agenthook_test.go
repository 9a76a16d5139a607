package agenthook

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/agents"
	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/git-synaptic/git-synaptic/memory"
)

func TestMain(m *testing.M) { testrepo.Main(m) }

var claude, _ = agents.Lookup("claude")

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
	if _, err := s.Memory().Save(ctx, app.SaveRequest{Content: "we chose postgres for billing", Type: memory.TypeDecision, SessionID: "sess-1"}); err != nil {
		t.Fatal(err)
	}
	in := ReadInput(strings.NewReader(`{"session_id":"sess-1","hook_event_name":"SessionStart","cwd":"/x"}`))
	if in.SessionID != "sess-1" {
		t.Fatalf("session id %q", in.SessionID)
	}

	var out bytes.Buffer
	if err := Run(ctx, s.Agent(), Request{Name: "session-start", Input: in, Agent: claude}, &out); err != nil {
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
	if err := Run(ctx, s.Agent(), Request{Name: "session-start", Input: in, Markdown: true}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "# Project memory") {
		t.Fatalf("markdown answer: %q", out.String())
	}

	out.Reset()
	if err := Run(ctx, s.Agent(), Request{Name: "stop", Input: in, Agent: claude}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Fatalf("stop printed %q", out.String())
	}
	handoffs, err := s.Recall().List(ctx, app.Filter{Types: []memory.Type{memory.TypeHandoff}})
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
	if in := ReadInput(nil); in.SessionID != "" || in.ToolInput != nil {
		t.Errorf("nil reader: %+v", in)
	}
	if err := Run(context.Background(), open(t).Agent(), Request{Name: "post-commit"}, &bytes.Buffer{}); err == nil {
		t.Error("post-commit accepted as an agent hook")
	}
}

// Claude Code's PostToolUse and Stop JSON become one capture: the tool
// calls' repository files and commands, and the agent's last message from
// the transcript as the outcome.
func TestToolAndStopCapture(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	root := s.Root()
	transcript := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(transcript, []byte(`{"type":"user","message":{"role":"user","content":"fix it"}}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Looking."},{"type":"tool_use","name":"Edit"}]}}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Fixed: the parser now skips BOMs."}]}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"ok"}]}}
`), 0o600)
	for _, hook := range []struct{ name, json string }{
		{"prompt", `{"session_id":"s9","hook_event_name":"UserPromptSubmit","prompt":"the parser chokes on a BOM"}`},
		{"tool", `{"session_id":"s9","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"` + filepath.Join(root, "parse.go") + `","old_string":"a","new_string":"b"},"tool_response":{}}`},
		{"tool", `{"session_id":"s9","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./...","description":"Run the tests"}}`},
		{"stop", `{"session_id":"s9","hook_event_name":"Stop","transcript_path":"` + transcript + `","stop_hook_active":false}`},
	} {
		var out bytes.Buffer
		if err := Run(ctx, s.Agent(), Request{Name: hook.name, Input: ReadInput(strings.NewReader(hook.json)), Agent: claude}, &out); err != nil {
			t.Fatalf("%s: %v", hook.name, err)
		}
	}
	caps, err := s.Recall().List(ctx, app.Filter{Tags: []string{app.CaptureTag}})
	if err != nil || len(caps) != 1 {
		t.Fatalf("captures: %+v, %v", caps, err)
	}
	for _, w := range []string{"Exchange: the parser chokes on a BOM", "Outcome: Fixed: the parser now skips BOMs.", "Tools: Bash 1, Edit 1", "Ran: Run the tests", "Files: parse.go"} {
		if !strings.Contains(caps[0].Content, w) {
			t.Errorf("capture lacks %q:\n%s", w, caps[0].Content)
		}
	}
}

// The transcript's last assistant text is found after a seek into the
// middle of a line, with string or block content, and a missing or odd
// file gives "".
func TestLastAssistantText(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.jsonl")
	os.WriteFile(p, []byte(`tial line","type":"assistant"}
{"type":"assistant","message":{"content":"plain string answer"}}
{"type":"summary","summary":"x"}`), 0o600)
	if got := lastAssistantText(p); got != "plain string answer" {
		t.Errorf("got %q", got)
	}
	for _, bad := range []string{"", filepath.Join(dir, "missing"), dir} {
		if got := lastAssistantText(bad); got != "" {
			t.Errorf("%q: %q", bad, got)
		}
	}
	if tu := toolUse("Read", json.RawMessage(`{"file_path":"/x/y.go"}`)); tu.Tool != "Read" || len(tu.Files) != 1 || tu.What != "" {
		t.Errorf("Read: %+v", tu)
	}
	if tu := toolUse("Bash", json.RawMessage(`{"command":"make test"}`)); tu.What != "make test" {
		t.Errorf("Bash without description: %+v", tu)
	}
	if tu := toolUse("Weird", json.RawMessage(`[1,2]`)); tu.Tool != "Weird" || tu.Files != nil {
		t.Errorf("odd input: %+v", tu)
	}
}

// A handoff the prompt hook showed in three sessions is not promoted by
// that use: once idle for its window it expires like any other.
func TestUsedHandoffExpires(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	s, err := app.Open(testrepo.NewRepo(t), app.Options{Warn: os.Stderr, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := s.Memory().Save(ctx, app.SaveRequest{Content: "handoff: the migration is half done, resume at step 4", Type: memory.TypeHandoff})
	if err != nil {
		t.Fatal(err)
	}
	for i, sess := range []string{"a", "b", "c"} {
		var out bytes.Buffer
		if err := Run(ctx, s.Agent(), Request{Name: "prompt", Input: Input{SessionID: sess, Prompt: "what is left of the migration?"}, Markdown: true}, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), app.ShortID(h.ID)) {
			t.Fatalf("prompt %d did not show the handoff:\n%s", i, out.String())
		}
	}
	now = now.AddDate(0, 0, 20) // idle past the 14-day window of 3+ uses
	var out bytes.Buffer
	if err := Run(ctx, s.Agent(), Request{Name: "session-start", Input: Input{SessionID: "d"}, Markdown: true}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "1 archived") || strings.Contains(out.String(), app.ShortID(h.ID)) {
		t.Errorf("the used handoff did not expire:\n%s", out.String())
	}
}

// Every dialect's tool call names its files: VS Code's camelCase and file
// lists, Codex's apply_patch and argv commands, Gemini's paths.
func TestToolUseDialects(t *testing.T) {
	for _, tc := range []struct {
		input, what string
		files       []string
	}{
		{`{"files":["a.go","b.go"]}`, "", []string{"a.go", "b.go"}},
		{`{"filePath":"c.go"}`, "", []string{"c.go"}},
		{`{"absolute_path":"/r/d.go"}`, "", []string{"/r/d.go"}},
		{`{"command":"*** Begin Patch\n*** Update File: e.go\n@@\n*** Add File: f.go\n*** End Patch"}`, "", []string{"e.go", "f.go"}},
		{`{"command":["go","test","./..."]}`, "go test ./...", nil},
	} {
		got := toolUse("x", json.RawMessage(tc.input))
		if got.What != tc.what || strings.Join(got.Files, ",") != strings.Join(tc.files, ",") {
			t.Errorf("%s: %+v", tc.input, got)
		}
	}
}

// Agents that parse every hook's output as JSON get {} when there is
// nothing to say, and when the hook's input is bad.
func TestQuietAnswers(t *testing.T) {
	s := open(t)
	for _, name := range []string{"gemini", "cursor"} {
		a, _ := agents.Lookup(name)
		var out bytes.Buffer
		err := Run(context.Background(), s.Agent(), Request{Name: "tool", Agent: a, Input: Input{SessionID: "bad\nid"}}, &out)
		if err == nil || strings.TrimSpace(out.String()) != "{}" {
			t.Errorf("%s, bad session: %v %q", name, err, out.String())
		}
	}
	var out bytes.Buffer
	if err := Run(context.Background(), s.Agent(), Request{Name: "tool", Agent: claude, Input: Input{SessionID: "s"}}, &out); err != nil || out.Len() != 0 {
		t.Errorf("claude's tool hook printed %q (%v)", out.String(), err)
	}
}

package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// init --agent auto in a repository holding the six agents' configuration
// wires all six; each agent's hooks, fed the stdin its documentation
// shows, answer in that agent's shape and capture the exchange; --remove
// leaves no trace (git status is clean, the user's files are as they were).
func TestEveryAgentEndToEnd(t *testing.T) {
	dir := testrepo.NewRepo(t)
	user := map[string]string{
		".claude/settings.json": "{\n  \"permissions\": {\"allow\": [\"Bash(make test)\"]}\n}\n",
		".codex/config.toml":    "# mine\nmodel = \"gpt-5-codex\"\n",
		".gemini/settings.json": "{\n  // mine\n  \"theme\": \"GitHub\"\n}\n",
		".cursor/mcp.json":      "{\"mcpServers\": {\"docs\": {\"command\": \"docs-server\"}}}\n",
		"opencode.json":         "{\"$schema\": \"https://opencode.ai/config.json\"}\n",
		".vscode/settings.json": "{\"editor.tabSize\": 4}\n",
	}
	var names []string
	for rel, text := range user {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755)
		os.WriteFile(filepath.Join(dir, rel), []byte(text), 0o644)
		names = append(names, rel)
	}
	testrepo.Git(t, dir, append([]string{"add", "--"}, names...)...)
	testrepo.Git(t, dir, "commit", "-q", "-m", "the team's agent settings")

	var rep struct {
		Agents []struct{ Agent, Path, Action string }
	}
	if err := json.Unmarshal([]byte(ok(t, dir, "init", "--agent", "auto", "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	wired := map[string]bool{}
	for _, a := range rep.Agents {
		wired[a.Agent] = true
	}
	for _, a := range []string{"claude", "codex", "gemini", "cursor", "opencode", "vscode"} {
		if !wired[a] {
			t.Errorf("init --agent auto did not wire %s: %+v", a, rep.Agents)
		}
	}
	if out := ok(t, dir, "init", "--agent", "auto"); !strings.Contains(out, "already set up") {
		t.Fatalf("second init --agent auto: %s", out)
	}
	ok(t, dir, "save", "we chose postgres for billing because of row locks", "--type", "decision")

	type answer = map[string]any
	hook := func(agent, event, stdin string) (answer, string) {
		t.Helper()
		args := []string{"hook", event}
		if agent != "claude" {
			args = append(args, "--agent", agent)
		}
		r := run(t, dir, stdin, args...)
		if r.code != 0 {
			t.Fatalf("%s %s: exit %d: %s", agent, event, r.code, r.err)
		}
		if strings.TrimSpace(r.out) == "" {
			return nil, ""
		}
		var a answer
		if err := json.Unmarshal([]byte(r.out), &a); err != nil {
			t.Fatalf("%s %s printed what is not JSON: %v\n%s", agent, event, err, r.out)
		}
		return a, r.out
	}
	hookSpecific := func(a answer, event string) string {
		t.Helper()
		h, _ := a["hookSpecificOutput"].(map[string]any)
		if h == nil || h["hookEventName"] != event || len(a) != 1 || len(h) != 2 {
			t.Fatalf("want {hookSpecificOutput: {hookEventName: %s, additionalContext}}, got %v", event, a)
		}
		s, _ := h["additionalContext"].(string)
		return s
	}
	const prompt = "why did we choose postgres for billing?"
	for _, tc := range []struct {
		agent string
		// stdin as each agent's documentation shows it
		start, prompt, tool, stop string
		check                     func(start, prompt, tool, stop answer)
	}{
		{"claude",
			`{"session_id":"c-1","hook_event_name":"SessionStart","source":"startup","transcript_path":"","cwd":"."}`,
			`{"session_id":"c-1","hook_event_name":"UserPromptSubmit","prompt":"` + prompt + `"}`,
			`{"session_id":"c-1","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"billing/db.go"}}`,
			`{"session_id":"c-1","hook_event_name":"Stop","stop_hook_active":false}`,
			func(start, prompt, tool, stop answer) {
				if !strings.Contains(hookSpecific(start, "SessionStart"), "postgres for billing") || !strings.Contains(hookSpecific(prompt, "UserPromptSubmit"), "postgres") || tool != nil || stop != nil {
					t.Fatalf("claude: %v %v %v %v", start, prompt, tool, stop)
				}
			}},
		{"codex",
			`{"session_id":"x-1","hook_event_name":"SessionStart","source":"startup","cwd":".","model":"gpt-5-codex","permission_mode":"default","transcript_path":null}`,
			`{"session_id":"x-1","turn_id":"t1","hook_event_name":"UserPromptSubmit","prompt":"` + prompt + `","cwd":".","model":"gpt-5-codex","permission_mode":"default","transcript_path":null}`,
			`{"session_id":"x-1","turn_id":"t1","hook_event_name":"PostToolUse","tool_name":"apply_patch","tool_use_id":"u1","tool_input":{"command":"*** Begin Patch\n*** Update File: billing/db.go\n@@\n-a\n+b\n*** End Patch"},"tool_response":"ok","cwd":".","model":"m","permission_mode":"default","transcript_path":null}`,
			`{"session_id":"x-1","turn_id":"t1","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"codex-answer: row locks","cwd":".","model":"m","permission_mode":"default","transcript_path":null}`,
			func(start, prompt, tool, stop answer) {
				if !strings.Contains(hookSpecific(start, "SessionStart"), "postgres") || !strings.Contains(hookSpecific(prompt, "UserPromptSubmit"), "postgres") || tool != nil || stop != nil {
					t.Fatalf("codex: %v %v %v %v", start, prompt, tool, stop)
				}
			}},
		{"gemini",
			`{"session_id":"g-1","transcript_path":"","cwd":".","hook_event_name":"SessionStart","timestamp":"2026-11-25T10:00:00Z","source":"startup"}`,
			`{"session_id":"g-1","transcript_path":"","cwd":".","hook_event_name":"BeforeAgent","timestamp":"2026-11-25T10:00:01Z","prompt":"` + prompt + `"}`,
			`{"session_id":"g-1","transcript_path":"","cwd":".","hook_event_name":"AfterTool","timestamp":"2026-11-25T10:00:02Z","tool_name":"write_file","tool_input":{"file_path":"billing/db.go","content":"x"},"tool_response":{"llmContent":"ok"}}`,
			`{"session_id":"g-1","transcript_path":"","cwd":".","hook_event_name":"AfterAgent","timestamp":"2026-11-25T10:00:03Z","prompt":"` + prompt + `","prompt_response":"gemini-answer: row locks","stop_hook_active":false}`,
			func(start, prompt, tool, stop answer) {
				if !strings.Contains(hookSpecific(start, "SessionStart"), "postgres") || !strings.Contains(hookSpecific(prompt, "BeforeAgent"), "postgres") || tool == nil || len(tool) != 0 || stop == nil || len(stop) != 0 {
					t.Fatalf("gemini (tool and stop answer {}): %v %v %v %v", start, prompt, tool, stop)
				}
			}},
		{"cursor",
			`{"conversation_id":"k-1","session_id":"k-1","generation_id":"g","hook_event_name":"sessionStart","cursor_version":"3.2","workspace_roots":["."],"is_background_agent":false,"composer_mode":"agent"}`,
			`{"conversation_id":"k-1","generation_id":"g","hook_event_name":"beforeSubmitPrompt","workspace_roots":["."],"prompt":"` + prompt + `","attachments":[]}`,
			`{"conversation_id":"k-1","generation_id":"g","hook_event_name":"postToolUse","workspace_roots":["."],"tool_name":"Write","tool_input":{"file_path":"billing/db.go"},"tool_output":"ok"}`,
			`{"conversation_id":"k-1","generation_id":"g","hook_event_name":"stop","workspace_roots":["."],"status":"completed","loop_count":0}`,
			func(start, prompt, tool, stop answer) {
				ctx, _ := start["additional_context"].(string)
				env, _ := start["env"].(map[string]any)
				if !strings.Contains(ctx, "postgres") || env["GIT_SYNAPTIC_SESSION"] != "k-1" || len(start) != 2 {
					t.Fatalf("cursor sessionStart: %v", start)
				}
				if len(prompt) != 1 || prompt["continue"] != true || tool == nil || len(tool) != 0 || stop == nil || len(stop) != 0 {
					t.Fatalf("cursor: %v %v %v", prompt, tool, stop)
				}
			}},
		{"vscode",
			`{"timestamp":"2026-11-25T10:00:00.000Z","cwd":".","sessionId":"v-1","hookEventName":"SessionStart","transcript_path":"","source":"new"}`,
			`{"timestamp":"2026-11-25T10:00:01.000Z","cwd":".","sessionId":"v-1","hookEventName":"UserPromptSubmit","transcript_path":"","prompt":"` + prompt + `"}`,
			`{"timestamp":"2026-11-25T10:00:02.000Z","cwd":".","sessionId":"v-1","hookEventName":"PostToolUse","transcript_path":"","tool_name":"editFiles","tool_input":{"files":["billing/db.go"]},"tool_use_id":"t","tool_response":"ok"}`,
			`{"timestamp":"2026-11-25T10:00:03.000Z","cwd":".","sessionId":"v-1","hookEventName":"Stop","transcript_path":"","stop_hook_active":false}`,
			func(start, prompt, tool, stop answer) {
				if !strings.Contains(hookSpecific(start, "SessionStart"), "postgres") || prompt != nil || tool != nil || stop != nil {
					t.Fatalf("vscode (UserPromptSubmit takes the common output only): %v %v %v %v", start, prompt, tool, stop)
				}
			}},
	} {
		start, _ := hook(tc.agent, "session-start", tc.start)
		p, _ := hook(tc.agent, "prompt", tc.prompt)
		tool, _ := hook(tc.agent, "tool", tc.tool)
		stop, _ := hook(tc.agent, "stop", tc.stop)
		tc.check(start, p, tool, stop)
	}
	// Each agent's exchange was captured in its session, with the files it
	// touched and, where the agent passes it, its last message.
	caps := listJSON(t, dir, "--tag", "auto-capture")
	bySession := map[string]string{}
	for _, c := range caps {
		bySession[c.Session] = c.Content
	}
	for sess, want := range map[string]string{"c-1": "billing/db.go", "x-1": "codex-answer", "g-1": "gemini-answer", "k-1": "billing/db.go", "v-1": "billing/db.go"} {
		if !strings.Contains(bySession[sess], want) || !strings.Contains(bySession[sess], "postgres") {
			t.Errorf("capture of session %s lacks %q: %q", sess, want, bySession[sess])
		}
	}
	if !strings.Contains(bySession["x-1"], "billing/db.go") {
		t.Errorf("codex's apply_patch file not captured: %q", bySession["x-1"])
	}
	// VS Code also runs .claude/settings.json's hooks: with its own
	// installed, the claude one steps aside.
	if r := run(t, dir, `{"sessionId":"v-2","hookEventName":"SessionStart","source":"new"}`, "hook", "session-start"); r.code != 0 || r.out != "" {
		t.Fatalf("the claude hook under VS Code: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "AGENTS.md")); !strings.Contains(string(b), "context_search") {
		t.Fatalf("OpenCode's AGENTS.md block: %s", b)
	}

	out := ok(t, dir, "init", "--agent", "auto", "--remove")
	for _, a := range []string{"claude", "codex", "gemini", "cursor", "opencode", "vscode"} {
		if !strings.Contains(out, a+": ") {
			t.Errorf("--remove did not mention %s:\n%s", a, out)
		}
	}
	if st := testrepo.Git(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("--remove left a trace:\n%s", st)
	}
	if out := ok(t, dir, "init", "--agent", "auto", "--remove"); !strings.Contains(out, "nothing to remove") {
		t.Fatalf("second --remove: %s", out)
	}
	if r := run(t, dir, "", "init", "--remove"); r.code != 2 {
		t.Fatalf("--remove without --agent: %+v", r)
	}
}

// Inits run at once (an editor and a terminal, say) save the auto-distill
// rule once.
func TestConcurrentInitsSaveTheRuleOnce(t *testing.T) {
	dir := testrepo.NewRepo(t)
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		go func() {
			r, err := testrepo.RunBinary(bin, dir, "", nil, "init", "--agent", "claude,cursor,gemini")
			if err == nil && r.Code != 0 {
				err = fmt.Errorf("exit %d: %s", r.Code, r.Err)
			}
			errs <- err
		}()
	}
	var failed []error
	for i := 0; i < 6; i++ { // every init has ended before the test does
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) > 0 {
		t.Fatal(failed)
	}
	var rules []map[string]any
	if err := json.Unmarshal([]byte(ok(t, dir, "rules", "--json")), &rules); err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 {
		t.Fatalf("%d auto-distill rules after concurrent inits: %v", len(rules), rules)
	}
}

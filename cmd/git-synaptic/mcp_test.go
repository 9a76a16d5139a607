package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// mcpClient drives `git-synaptic mcp` over its stdin and stdout.
type mcpClient struct {
	t    *testing.T
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	next int
}

func startMCP(t *testing.T, dir string) *mcpClient {
	t.Helper()
	return startMCPEnv(t, dir, append(os.Environ(), "GIT_SYNAPTIC_SESSION=test-session-1"))
}

// envWithoutSession is the environment with no $GIT_SYNAPTIC_SESSION, as
// an agent that gives its server none.
func envWithoutSession() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_SYNAPTIC_SESSION=") {
			env = append(env, kv)
		}
	}
	return env
}

// startMCPEnv starts the MCP server in dir with env; it is stopped, and
// checked for panics, when the test ends.
func startMCPEnv(t *testing.T, dir string, env []string) *mcpClient {
	t.Helper()
	cmd := exec.Command(bin, "mcp")
	cmd.Dir, cmd.Env = dir, env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &mcpClient{t: t, cmd: cmd, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			t.Error("mcp server did not exit when stdin closed")
		}
		if strings.Contains(stderr.String(), "panic") {
			t.Errorf("mcp server panicked:\n%s", stderr.String())
		}
	})
	return c
}

type rpcResponse struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (c *mcpClient) call(method string, params any) rpcResponse {
	c.t.Helper()
	c.next++
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
	if _, err := c.in.Write(append(req, '\n')); err != nil {
		c.t.Fatal(err)
	}
	type lineOrErr struct {
		line string
		err  error
	}
	ch := make(chan lineOrErr, 1)
	go func() {
		for {
			line, err := c.out.ReadString('\n')
			if err != nil {
				ch <- lineOrErr{err: err}
				return
			}
			var r rpcResponse
			if json.Unmarshal([]byte(line), &r) == nil && r.ID == c.next {
				ch <- lineOrErr{line: line}
				return
			}
		}
	}()
	select {
	case got := <-ch:
		if got.err != nil {
			c.t.Fatalf("%s: %v", method, got.err)
		}
		var r rpcResponse
		json.Unmarshal([]byte(got.line), &r)
		return r
	case <-time.After(30 * time.Second):
		c.t.Fatalf("%s: no answer in 30 s", method)
	}
	return rpcResponse{}
}

type toolResult struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	Structured json.RawMessage `json:"structuredContent"`
	IsError    bool            `json:"isError"`
}

func (c *mcpClient) tool(name string, args map[string]any) toolResult {
	c.t.Helper()
	r := c.call("tools/call", map[string]any{"name": name, "arguments": args})
	if r.Error != nil {
		c.t.Fatalf("%s: protocol error %+v", name, r.Error)
	}
	var tr toolResult
	if err := json.Unmarshal(r.Result, &tr); err != nil || len(tr.Content) == 0 {
		c.t.Fatalf("%s: bad result %s", name, r.Result)
	}
	return tr
}

func TestMCPServerOverStdio(t *testing.T) {
	dir := testrepo.NewRepo(t)
	commitFiles(t, dir, "billing schema", "billing/schema.sql", "billing/model.go")
	commitFiles(t, dir, "billing model", "billing/schema.sql", "billing/model.go")
	teammate := "Other Person <other@example.com>"
	cmd := exec.Command(bin, "save", "teammate says: billing uses postgres 16", "--type", "decision")
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=Other Person", "GIT_AUTHOR_EMAIL=other@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("teammate save: %v %s", err, out)
	}

	c := startMCP(t, dir)
	init := c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "1"}})
	if init.Error != nil || !strings.Contains(string(init.Result), "git-synaptic") {
		t.Fatalf("initialize: %+v %s", init.Error, init.Result)
	}
	c.in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))

	list := c.call("tools/list", map[string]any{})
	var tools struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	json.Unmarshal(list.Result, &tools)
	want := []string{"context_save", "context_search", "context_list", "context_status", "context_update", "context_pin", "context_archive", "context_delete", "context_related", "context_git_index", "context_cochanges",
		"context_session", "context_save_rule", "context_list_rules", "context_delete_rule", "context_relevant", "context_irrelevant", "context_resolve_pattern",
		"context_pending_rules", "context_accept_rule", "context_dismiss_rule", "context_suggest", "context_verify"}
	have := map[string]bool{}
	for _, tl := range tools.Tools {
		have[tl.Name] = true
		if tl.Description == "" || !strings.Contains(string(tl.InputSchema), `"type":"object"`) {
			t.Errorf("tool %s lacks a description or schema", tl.Name)
		}
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("tools/list misses %s", w)
		}
	}

	saved := c.tool("context_save", map[string]any{"content": "the billing worker retries 3 times with backoff", "type": "insight", "tags": []string{"billing"}})
	var s struct{ ID string }
	json.Unmarshal(saved.Structured, &s)
	if saved.IsError || len(s.ID) != 32 {
		t.Fatalf("context_save: %+v", saved)
	}
	other := c.tool("context_save", map[string]any{"content": "see the retry insight", "related_ids": []string{s.ID}})
	// the same entry as a resource, with its link
	uri := "synaptic://entries/" + s.ID[:8]
	read := c.call("resources/read", map[string]any{"uri": uri})
	var contents struct {
		Contents []struct{ URI, MimeType, Text string }
	}
	json.Unmarshal(read.Result, &contents)
	if read.Error != nil || len(contents.Contents) != 1 || contents.Contents[0].URI != uri || contents.Contents[0].MimeType != "text/markdown" ||
		!strings.Contains(contents.Contents[0].Text, "retries 3 times") || !strings.Contains(contents.Contents[0].Text, "see the retry insight") {
		t.Errorf("resources/read %s: %+v %s", uri, read.Error, read.Result)
	}
	if bad := c.call("resources/read", map[string]any{"uri": "synaptic://entries/ffffffff"}); bad.Error == nil {
		t.Errorf("an unknown entry read as %s", bad.Result)
	}

	res := c.tool("context_search", map[string]any{"query": "billing postgres retries", "limit": 5})
	text := res.Content[0].Text
	if res.IsError || !strings.Contains(text, "(teammate)") || !strings.Contains(text, "(you)") || !strings.Contains(text, teammate) {
		t.Fatalf("search results lack provenance:\n%s", text)
	}
	// an unknown type is refused, as the CLI refuses it, not an empty list
	if r := c.tool("context_list", map[string]any{"types": []string{"decisions"}}); !r.IsError || !strings.Contains(r.Content[0].Text, "unknown type") {
		t.Errorf("unknown type: %+v", r)
	}
	if r := c.tool("context_list", map[string]any{"types": []string{"decision"}}); !strings.Contains(r.Content[0].Text, "postgres 16") || strings.Contains(r.Content[0].Text, "retries 3") {
		t.Fatalf("context_list with a type filter:\n%s", r.Content[0].Text)
	}
	if r := c.tool("context_update", map[string]any{"id": s.ID[:8], "content": "the billing worker retries 5 times", "add_tags": []string{"retry"}}); r.IsError {
		t.Fatalf("context_update: %+v", r)
	}
	if r := c.tool("context_pin", map[string]any{"id": s.ID}); r.IsError || !strings.Contains(r.Content[0].Text, "pin") {
		t.Fatalf("context_pin: %+v", r)
	}
	rel := c.tool("context_related", map[string]any{"id": s.ID})
	if rel.IsError || !strings.Contains(rel.Content[0].Text, "retries 5 times") || !strings.Contains(rel.Content[0].Text, "see the retry insight") {
		t.Fatalf("context_related:\n%s", rel.Content[0].Text)
	}
	idx := c.tool("context_git_index", map[string]any{})
	if idx.IsError || !strings.Contains(idx.Content[0].Text, "indexed 3 new commits") {
		t.Fatalf("context_git_index: %+v", idx.Content)
	}
	co := c.tool("context_cochanges", map[string]any{"file": "billing/model.go"})
	if co.IsError || !strings.Contains(co.Content[0].Text, "billing/schema.sql (2 times") {
		t.Fatalf("context_cochanges:\n%s", co.Content[0].Text)
	}
	st := c.tool("context_status", map[string]any{})
	if st.IsError || !strings.Contains(st.Content[0].Text, "3 entries") || !strings.Contains(st.Content[0].Text, "3 indexed commits") {
		t.Fatalf("context_status:\n%s", st.Content[0].Text)
	}
	// the entry is pinned: an agent's archive skips it until it is unpinned
	if r := c.tool("context_archive", map[string]any{"ids": []string{s.ID}}); r.IsError || !strings.Contains(r.Content[0].Text, "skipped pinned") {
		t.Fatalf("context_archive of a pinned entry: %+v", r)
	}
	if r := c.tool("context_pin", map[string]any{"id": s.ID, "pinned": false}); r.IsError {
		t.Fatalf("context_pin false: %+v", r)
	}
	if r := c.tool("context_archive", map[string]any{"ids": []string{s.ID}}); r.IsError || !strings.Contains(r.Content[0].Text, "archived "+s.ID) {
		t.Fatalf("context_archive: %+v", r)
	}
	if r := c.tool("context_search", map[string]any{"query": "retries"}); strings.Contains(r.Content[0].Text, "retries 5") {
		t.Fatalf("archived entry still found:\n%s", r.Content[0].Text)
	}
	var o struct{ ID string }
	json.Unmarshal(other.Structured, &o)
	if r := c.tool("context_delete", map[string]any{"id": o.ID}); r.IsError || !strings.Contains(r.Content[0].Text, "deleted") {
		t.Fatalf("context_delete: %+v", r)
	}

	// Relevance feedback.
	if r := c.tool("context_relevant", map[string]any{"id": s.ID, "score": 0.9, "reason": "explains retries"}); r.IsError || !strings.Contains(r.Content[0].Text, "relevant (0.90)") {
		t.Fatalf("context_relevant: %+v", r)
	}
	if r := c.tool("context_relevant", map[string]any{"id": s.ID, "score": 7}); !r.IsError || !strings.Contains(r.Content[0].Text, "at most 1") {
		t.Fatalf("context_relevant with a bad score: %+v", r)
	}
	if r := c.tool("context_irrelevant", map[string]any{"id": s.ID}); r.IsError {
		t.Fatalf("context_irrelevant: %+v", r)
	}

	// Rules: save under a label, list, delete by label.
	if r := c.tool("context_save_rule", map[string]any{"label": "No Generated Files", "content": "never commit files under gen/"}); r.IsError || !strings.Contains(r.Content[0].Text, "no-generated-files") {
		t.Fatalf("context_save_rule: %+v", r)
	}
	if r := c.tool("context_list_rules", map[string]any{}); !strings.Contains(r.Content[0].Text, "never commit files under gen/") || !strings.Contains(r.Content[0].Text, "rule:no-generated-files") {
		t.Fatalf("context_list_rules:\n%s", r.Content[0].Text)
	}
	// the CLI sees the label an agent gave
	if out := ok(t, dir, "rules"); !strings.Contains(out, "[no-generated-files] never commit files under gen/") {
		t.Fatalf("rules in the CLI:\n%s", out)
	}
	if r := c.tool("context_delete_rule", map[string]any{"rule": "no-generated-files"}); r.IsError {
		t.Fatalf("context_delete_rule: %+v", r)
	}
	if r := c.tool("context_list_rules", map[string]any{}); strings.Contains(r.Content[0].Text, "never commit") {
		t.Fatalf("deleted rule still listed:\n%s", r.Content[0].Text)
	}
	if r := c.tool("context_delete_rule", map[string]any{"rule": s.ID}); !r.IsError || !strings.Contains(r.Content[0].Text, "not a rule") {
		t.Fatalf("deleting a non-rule: %+v", r)
	}
	// Sessions: saves carry this server's session id.
	c.tool("context_save", map[string]any{"content": "session work item", "type": "progress"})
	if r := c.tool("context_session", map[string]any{}); r.IsError || !strings.Contains(r.Content[0].Text, "session work item") {
		t.Fatalf("context_session:\n%+v", r)
	}
	if r := c.tool("context_session", map[string]any{"session_id": "nobody"}); !strings.Contains(r.Content[0].Text, "0 entries") {
		t.Fatalf("context_session of another session:\n%s", r.Content[0].Text)
	}

	// Recurring issues: the third similar issue makes a pattern, search
	// labels it, resolving it stops that; a repeated save is reported as a
	// near-duplicate (by meaning: the server has the model loaded).
	var issueIDs []string
	for _, text := range []string{"TestSync times out on CI under load", "TestSync timed out again on the CI runner", "TestSync times out on CI under heavy load"} {
		r := c.tool("context_save", map[string]any{"content": text, "type": "issue"})
		var e struct {
			ID   string   `json:"id"`
			Dups []string `json:"near_duplicates"`
		}
		json.Unmarshal(r.Structured, &e)
		issueIDs = append(issueIDs, e.ID)
		if len(issueIDs) == 3 && (len(e.Dups) == 0 || !strings.Contains(r.Content[0].Text, "near-duplicate of") || !strings.Contains(r.Content[0].Text, ", linked: ")) {
			t.Fatalf("near-duplicate not reported as linked: %s", r.Content[0].Text)
		}
	}
	// A shared near-duplicate of private memory is reported, not linked.
	priv := c.tool("context_save", map[string]any{"content": "the staging database password rotates every Monday at noon", "type": "insight", "private": true})
	var privID struct {
		ID string `json:"id"`
	}
	json.Unmarshal(priv.Structured, &privID)
	if r := c.tool("context_save", map[string]any{"content": "the staging database password rotates every Monday at noon.", "type": "insight"}); privID.ID == "" ||
		!strings.Contains(r.Content[0].Text, "near-duplicate of "+privID.ID[:8]) || !strings.Contains(r.Content[0].Text, "not linked (private memory") {
		t.Fatalf("a shared near-duplicate of private memory: %s", r.Content[0].Text)
	}
	if r := c.tool("context_search", map[string]any{"query": "TestSync timeout", "types": []string{"issue"}}); !strings.Contains(r.Content[0].Text, "[Pattern: seen 3 times since") {
		t.Fatalf("pattern label missing:\n%s", r.Content[0].Text)
	}
	if r := c.tool("context_resolve_pattern", map[string]any{"id": issueIDs[1]}); r.IsError || !strings.Contains(r.Content[0].Text, "3 issues") {
		t.Fatalf("context_resolve_pattern: %+v", r)
	}
	if r := c.tool("context_search", map[string]any{"query": "TestSync timeout", "types": []string{"issue"}}); strings.Contains(r.Content[0].Text, "[Pattern:") {
		t.Fatalf("resolved pattern still labelled:\n%s", r.Content[0].Text)
	}
	if r := c.tool("context_resolve_pattern", map[string]any{"id": issueIDs[1]}); !r.IsError {
		t.Fatalf("resolving twice: %+v", r)
	}

	// Bad calls are tool errors, and the server keeps serving.
	for _, bad := range []struct {
		name string
		args map[string]any
		msg  string
	}{
		{"context_save", map[string]any{}, "content"},
		{"context_save", map[string]any{"content": "key AKIAQYLPMN5HHHFPZAM2"}, "secret"},
		{"context_save", map[string]any{"content": "x", "type": "nonsense"}, "unknown type"},
		{"context_search", map[string]any{"query": "x", "limit": 100000}, "limit"},
		{"context_update", map[string]any{"id": "ffffffff", "content": "y"}, "no such memory entry"},
		{"context_cochanges", map[string]any{"file": 42}, "file"},
		{"context_cochanges", map[string]any{"file": "billing/model.go", "limit": 100}, "limit 100: give 1 to 50"},
		{"context_cochanges", map[string]any{"file": "billing/model.go", "limit": -1}, "limit -1"},
		{"context_cochanges", map[string]any{"file": "billing/model.go", "project": "no-such-project"}, "no-such-project"},
		{"context_archive", map[string]any{"ids": "not-a-list"}, "ids"},
	} {
		r := c.tool(bad.name, bad.args)
		if !r.IsError || !strings.Contains(r.Content[0].Text, bad.msg) {
			t.Errorf("%s %v: want a tool error about %q, got %+v", bad.name, bad.args, bad.msg, r)
		}
	}
	if r := c.call("tools/call", map[string]any{"name": "no_such_tool", "arguments": map[string]any{}}); r.Error == nil && !strings.Contains(string(r.Result), "isError") {
		t.Errorf("unknown tool accepted: %s", r.Result)
	}
	// A save from another process is visible to the running server.
	ok(t, dir, "save", "saved from the CLI while the server runs")
	if r := c.tool("context_search", map[string]any{"query": "server runs"}); !strings.Contains(r.Content[0].Text, "saved from the CLI") {
		t.Fatalf("server does not see new memory:\n%s", r.Content[0].Text)
	}
}

func TestMCPServerGeneratesASessionWhenTheAgentGivesNone(t *testing.T) {
	dir := testrepo.NewRepo(t)
	c := startMCPEnv(t, dir, envWithoutSession())
	c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	c.tool("context_save", map[string]any{"content": "saved without a session from the agent"})
	r := c.tool("context_session", map[string]any{})
	if r.IsError || !strings.Contains(r.Content[0].Text, "saved without a session") || !strings.Contains(r.Content[0].Text, "session mcp-") {
		t.Fatalf("generated session: %+v", r)
	}
}

// One session, as Claude Code runs things: it tells its hooks the session
// id but not its MCP server, and starts the server before or after the
// session-start hook. Memory saved through the server, and through the
// agent's own git synaptic commands (the session exported in
// $CLAUDE_ENV_FILE), lands in the hooks' session and in its handoff; a
// new session id (resume, clear) moves the server with it.
func TestHooksAndMCPShareTheAgentSession(t *testing.T) {
	dir := testrepo.NewRepo(t)
	env := envWithoutSession()
	c := startMCPEnv(t, dir, env)
	c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "claude-code", "version": "1"}})

	envFile := filepath.Join(t.TempDir(), "claude-env")
	hook := exec.Command(bin, "hook", "session-start")
	hook.Dir, hook.Env = dir, append(env, "CLAUDE_ENV_FILE="+envFile)
	hook.Stdin = strings.NewReader(`{"session_id":"5f1c2a9e-claude","hook_event_name":"SessionStart","source":"startup","cwd":"` + dir + `"}`)
	if b, err := hook.CombinedOutput(); err != nil {
		t.Fatalf("session-start: %v %s", err, b)
	}
	if b, _ := os.ReadFile(envFile); string(b) != "export GIT_SYNAPTIC_SESSION=5f1c2a9e-claude\n" {
		t.Fatalf("CLAUDE_ENV_FILE: %q", b)
	}

	if r := c.tool("context_save", map[string]any{"content": "decided: retries stay at 3", "type": "decision"}); r.IsError {
		t.Fatalf("save: %+v", r)
	}
	save := exec.Command(bin, "save", "the flaky test was a shared temp dir", "--type", "issue")
	save.Dir, save.Env = dir, append(env, "GIT_SYNAPTIC_SESSION=5f1c2a9e-claude") // as the sourced env file sets it
	if b, err := save.CombinedOutput(); err != nil {
		t.Fatalf("save: %v %s", err, b)
	}
	r := c.tool("context_session", map[string]any{})
	if r.IsError || !strings.Contains(r.Content[0].Text, "session 5f1c2a9e-claude") || !strings.Contains(r.Content[0].Text, "retries stay at 3") || !strings.Contains(r.Content[0].Text, "shared temp dir") {
		t.Fatalf("context_session:\n%s", r.Content[0].Text)
	}
	if r := run(t, dir, `{"session_id":"5f1c2a9e-claude","hook_event_name":"Stop"}`, "hook", "stop"); r.code != 0 {
		t.Fatalf("stop: %+v", r)
	}
	handoffs := listJSON(t, dir, "--type", "handoff", "--session", "5f1c2a9e-claude")
	if len(handoffs) != 1 || !strings.Contains(handoffs[0].Content, "Memory saved: 1 decision, 1 issue.") {
		t.Fatalf("handoff: %+v", handoffs)
	}

	// /clear starts a new session: the server follows it
	run(t, dir, `{"session_id":"77aa-claude","hook_event_name":"SessionStart","source":"clear"}`, "hook", "session-start")
	c.tool("context_save", map[string]any{"content": "after clear"})
	if r := c.tool("context_session", map[string]any{}); !strings.Contains(r.Content[0].Text, "session 77aa-claude") || !strings.Contains(r.Content[0].Text, "after clear") || strings.Contains(r.Content[0].Text, "retries stay") {
		t.Fatalf("after a new session:\n%s", r.Content[0].Text)
	}
}

// context_session says how many entries the session has when it shows
// fewer, results name the agent that saved them and mark archived ones,
// and context_status's text has what its structured content has.
func TestMCPSessionTotalsAgentsArchivedAndStatus(t *testing.T) {
	dir := testrepo.NewRepo(t)
	c := startMCPEnv(t, dir, append(envWithoutSession(), "GIT_SYNAPTIC_SESSION=sess-many", "GIT_SYNAPTIC_AGENT=claude-code"))
	c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	var first string
	for i := range 12 {
		r := c.tool("context_save", map[string]any{"content": fmt.Sprintf("finding %d about the upload queue", i), "type": "insight"})
		if i == 0 {
			first = strings.Fields(r.Content[0].Text)[2]
		}
	}
	r := c.tool("context_session", map[string]any{})
	var res struct {
		Total   int `json:"total"`
		Results []struct {
			ID       string `json:"id"`
			AgentID  string `json:"agent_id"`
			Archived bool   `json:"archived"`
		} `json:"results"`
	}
	if err := json.Unmarshal(r.Structured, &res); err != nil || res.Total != 12 || len(res.Results) != 10 || res.Results[0].AgentID != "claude-code" {
		t.Fatalf("context_session: %v %+v %s", err, res, r.Structured)
	}
	if text := r.Content[0].Text; !strings.Contains(text, "the newest 10 of 12 entries") || !strings.Contains(text, "agent claude-code") {
		t.Fatalf("context_session text:\n%s", text)
	}
	if a := c.tool("context_archive", map[string]any{"ids": []string{first}}); a.IsError {
		t.Fatalf("archive %s: %+v", first, a)
	}
	r = c.tool("context_list", map[string]any{"include_archived": true, "limit": 20})
	res.Results = nil
	json.Unmarshal(r.Structured, &res)
	archived := 0
	for _, x := range res.Results {
		if x.Archived {
			archived++
			if !strings.HasPrefix(x.ID, first) {
				t.Errorf("marked archived: %s, archived: %s", x.ID, first)
			}
		}
	}
	if archived != 1 || strings.Count(r.Content[0].Text, "· ARCHIVED") != 1 {
		t.Fatalf("archived marks (%d):\n%s", archived, r.Content[0].Text)
	}
	st := c.tool("context_status", map[string]any{}).Content[0].Text
	for _, want := range []string{"12 entries (1 archived", "by type: insight 11", "by tier: ephemeral 0, working 11", "recurring issues: 0 active patterns", "search: "} {
		if !strings.Contains(st, want) {
			t.Errorf("context_status text lacks %q:\n%s", want, st)
		}
	}
}

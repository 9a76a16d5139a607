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
		if len(issueIDs) == 3 && (len(e.Dups) == 0 || !strings.Contains(r.Content[0].Text, "near-duplicate of")) {
			t.Fatalf("near-duplicate not reported: %s", r.Content[0].Text)
		}
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

func TestInitAgentClaudeWritesMCPConfigWithoutClobbering(t *testing.T) {
	dir := testrepo.NewRepo(t)
	existing := `{"mcpServers": {"other": {"command": "other-server"}}, "custom": [1, 2]}`
	os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(existing), 0o644)
	os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
	settings := `{"permissions": {"allow": ["Bash(make test)"]}, "hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo mine"}]}], "Stop": [{"hooks": [{"type": "command", "command": "echo stop"}]}]}}`
	os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(settings), 0o644)
	if out := ok(t, dir, "init", "--agent", "claude"); !strings.Contains(out, ".mcp.json") {
		t.Fatalf("init --agent claude: %s", out)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
		Custom []int `json:"custom"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".mcp.json"))
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.MCPServers["other"].Command != "other-server" || len(cfg.Custom) != 2 ||
		cfg.MCPServers["git-synaptic"].Command != "git-synaptic" || strings.Join(cfg.MCPServers["git-synaptic"].Args, " ") != "mcp" {
		t.Fatalf(".mcp.json after init:\n%s", b)
	}
	var st struct {
		Permissions struct{ Allow []string } `json:"permissions"`
		Hooks       map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct{ Type, Command string }
		} `json:"hooks"`
	}
	b, _ = os.ReadFile(filepath.Join(dir, ".claude", "settings.json"))
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Permissions.Allow) != 1 || len(st.Hooks["Stop"]) != 2 || len(st.Hooks["SessionStart"]) != 2 || len(st.Hooks["PreCompact"]) != 1 || len(st.Hooks["UserPromptSubmit"]) != 1 ||
		len(st.Hooks["PostToolUse"]) != 1 || st.Hooks["PostToolUse"][0].Hooks[0].Command != "git-synaptic hook tool" ||
		st.Hooks["SessionStart"][0].Hooks[0].Command != "echo mine" || st.Hooks["SessionStart"][1].Hooks[0].Command != "git-synaptic hook session-start" ||
		st.Hooks["Stop"][0].Hooks[0].Command != "echo stop" || st.Hooks["Stop"][1].Hooks[0].Command != "git-synaptic hook stop" ||
		st.Hooks["PreCompact"][0].Hooks[0].Command != "git-synaptic hook pre-compact" {
		t.Fatalf(".claude/settings.json after init:\n%s", b)
	}
	// the auto-distill rule, once; a deleted one stays deleted
	rules := func() []map[string]any {
		var rs []map[string]any
		if err := json.Unmarshal([]byte(ok(t, dir, "rules", "--json")), &rs); err != nil {
			t.Fatal(err)
		}
		return rs
	}
	rs := rules()
	if len(rs) != 1 || rs[0]["label"] != "auto-distill" || !strings.Contains(rs[0]["content"].(string), "tagged correction") {
		t.Fatalf("rules after init --agent claude: %v", rs)
	}
	if again := ok(t, dir, "init", "--agent", "claude"); !strings.Contains(again, "already set up") {
		t.Fatalf("second init changed something: %s", again)
	}
	ok(t, dir, "delete", rs[0]["id"].(string))
	if again := ok(t, dir, "init", "--agent", "claude"); !strings.Contains(again, "already set up") || len(rules()) != 0 {
		t.Fatalf("init brought a deleted auto-distill rule back: %s", again)
	}
	os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte("{broken"), 0o644)
	if r := run(t, dir, "", "init", "--agent", "claude"); r.code != 4 || !strings.Contains(r.err, "not valid JSON") {
		t.Fatalf("broken .mcp.json: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".mcp.json")); string(b) != "{broken" {
		t.Fatal("a broken .mcp.json was overwritten")
	}
	if r := run(t, dir, "", "init", "--agent", "vim"); r.code != 2 || !strings.Contains(r.err, "known: claude") {
		t.Fatalf("unknown agent: %+v", r)
	}
}

func TestSessionStartContext(t *testing.T) {
	dir := testrepo.NewRepo(t)
	commitFiles(t, dir, "api and handler", "api/server.go", "api/handler.go")
	commitFiles(t, dir, "api and handler again", "api/server.go", "api/handler.go")
	commitFiles(t, dir, "api and handler, third time", "api/server.go", "api/handler.go")
	ok(t, dir, "save", "never log request bodies: they hold customer data", "--type", "rule", "--pin")
	ok(t, dir, "save", "handoff: the retry work is half done, see server.go", "--type", "handoff")
	ok(t, dir, "save", "we chose chi over gin for the api router", "--type", "decision")
	ok(t, dir, "save", "temporary note", "--type", "progress")
	cmd := exec.Command(bin, "save", "the server.go timeout is 90 s, above the LB's 60 s", "--type", "insight")
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=Tea Mate", "GIT_AUTHOR_EMAIL=mate@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	// Old memory: only what is pinned comes back at a session start; a
	// handoff of last month is not the last one.
	old := time.Now().AddDate(0, -3, 0).UTC().Format(time.RFC3339)
	ok(t, dir, "import", writeJSONL(t, `{"content":"the vendor API reference lives at docs/vendor.md","type":"reference","created":"`+old+`"}`,
		`{"content":"we deploy on Tuesdays only","type":"decision","created":"`+old+`","pinned":true}`,
		`{"content":"handoff: the old migration work","type":"handoff","created":"`+old+`"}`))
	// Words a file's name shares are not the file.
	ok(t, dir, "save", "the settings page of the server crashes on an empty form", "--type", "issue")
	pending := ok(t, dir, "save", "Never run migrations against the shared staging database from a laptop.", "--type", "insight", "--tag", "correction")
	// Corrections found by their words; statements that only look so are not.
	ok(t, dir, "save", "We never force-push to main.", "--type", "insight")
	ok(t, dir, "save", "Stop words are removed by the tokenizer before indexing.", "--type", "insight")
	// Working on server.go now, and init --agent claude touched its settings.
	os.WriteFile(filepath.Join(dir, "api", "server.go"), []byte("changed\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
	os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte("{}\n"), 0o644)

	md := ok(t, dir, "hook", "session-start", "--format", "markdown")
	for _, want := range []string{"## Rules", "never log request bodies", "pinned", "## Last handoffs", "retry work is half done",
		"## Decisions and context", "chi over gin", "Tea Mate, teammate", "we deploy on Tuesdays only", "## Files you are working on: api/server.go\n", "api/handler.go (3×)", "timeout is 90 s",
		"## Pending rules", "Never run migrations"} {
		if !strings.Contains(md, want) {
			t.Errorf("session context lacks %q:\n%s", want, md)
		}
	}
	for _, unwanted := range []string{"temporary note", "vendor API reference", "old migration work"} {
		if strings.Contains(md, unwanted) {
			t.Errorf("the context has %q (ephemeral, or old and not pinned):\n%s", unwanted, md)
		}
	}
	rules := md[strings.Index(md, "## Pending rules"):]
	rules = rules[:strings.Index(rules[1:], "\n## ")+1]
	if !strings.Contains(rules, "We never force-push") || strings.Contains(rules, "Stop words") {
		t.Errorf("pending rules: want the correction, not the look-alike:\n%s", rules)
	}
	// Each item once, in its most specific section.
	for _, once := range []string{"Never run migrations", "timeout is 90 s", "settings page"} {
		if n := strings.Count(md, once); n != 1 {
			t.Errorf("%q appears %d times:\n%s", once, n, md)
		}
	}
	files := md[strings.Index(md, "## Files you are working on"):]
	if strings.Contains(files, "settings page") || !strings.Contains(files, "timeout is 90 s") {
		t.Errorf("the files' section matched words, not files:\n%s", files)
	}
	if id := strings.Fields(pending)[len(strings.Fields(pending))-1]; !strings.Contains(md, "Pending rules") || strings.Count(md, id[:8]) != 1 {
		t.Errorf("pending rule %s not shown exactly once:\n%s", id, md)
	}
	if small := ok(t, dir, "hook", "session-start", "--format", "markdown", "--budget", "400"); len(small) > 400 || !strings.Contains(small, "never log request bodies") {
		t.Fatalf("budgeted context (%d chars):\n%s", len(small), small)
	}
	var out struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	r := run(t, dir, `{"session_id":"abc","hook_event_name":"SessionStart","source":"startup"}`, "hook", "session-start")
	if err := json.Unmarshal([]byte(r.out), &out); err != nil || out.HookSpecificOutput.HookEventName != "SessionStart" || !strings.Contains(out.HookSpecificOutput.AdditionalContext, "chi over gin") {
		t.Fatalf("claude hook output: %v %+v", err, r)
	}
	// Outside a repository the hook prints nothing and exits 0.
	if r := run(t, t.TempDir(), "", "hook", "session-start"); r.code != 0 || r.out != "" {
		t.Fatalf("session-start outside a repo: %+v", r)
	}
}

func TestStopHookWritesOneHandoffPerSession(t *testing.T) {
	dir := testrepo.NewRepo(t)
	in := `{"session_id":"sess-42","hook_event_name":"SessionStart","source":"startup"}`
	run(t, dir, in, "hook", "session-start")
	env := append(os.Environ(), "GIT_SYNAPTIC_SESSION=sess-42")
	for _, args := range [][]string{
		{"save", "the fix was to close the body before retrying", "--type", "issue"},
		{"save", "insight: chi's router matches longest prefix first", "--type", "insight"},
		{"save", "just a progress note", "--type", "progress"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v %s", args, err, out)
		}
	}
	commitFiles(t, dir, "retry: close bodies", "client.go")
	os.WriteFile(filepath.Join(dir, "wip.go"), []byte("package wip\n"), 0o644)

	stop := `{"session_id":"sess-42","hook_event_name":"Stop","stop_hook_active":false}`
	if r := run(t, dir, stop, "hook", "stop"); r.code != 0 || r.out != "" {
		t.Fatalf("stop hook: %+v", r)
	}
	handoffs := listJSON(t, dir, "--type", "handoff", "--session", "sess-42")
	if len(handoffs) != 1 {
		t.Fatalf("handoffs: %+v", handoffs)
	}
	h := handoffs[0].Content
	for _, want := range []string{"Session handoff: sess-42", "Memory saved: 1 insight, 1 issue, 1 progress.", "retry: close bodies", "Left uncommitted: wip.go",
		"Learnings:", "the fix was to close the body", "chi's router"} {
		if !strings.Contains(h, want) {
			t.Errorf("handoff lacks %q:\n%s", want, h)
		}
	}
	if strings.Contains(h[strings.Index(h, "Learnings:"):], "just a progress note") {
		t.Errorf("a plain progress note counted as a learning:\n%s", h)
	}
	// Stopping again with nothing new changes nothing; new work updates the
	// same handoff instead of adding one per turn.
	tip := testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory")
	run(t, dir, stop, "hook", "stop")
	if testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory") != tip {
		t.Fatal("an idle stop wrote memory")
	}
	cmd := exec.Command(bin, "save", "we chose to keep retries at 3", "--type", "decision")
	cmd.Dir, cmd.Env = dir, env
	cmd.Run()
	run(t, dir, `{"session_id":"sess-42"}`, "hook", "pre-compact")
	handoffs = listJSON(t, dir, "--type", "handoff", "--session", "sess-42")
	if len(handoffs) != 1 || !strings.Contains(handoffs[0].Content, "keep retries at 3") || handoffs[0].Edits != 1 {
		t.Fatalf("handoff not updated in place: %+v", handoffs)
	}
	// No session id: nothing written, exit 0.
	if r := run(t, dir, "", "hook", "stop"); r.code != 0 {
		t.Fatalf("stop without a session: %+v", r)
	}
	// The session's own handoff is in its agent's context already: its
	// prompts do not bring it back; another session's do.
	hid := handoffs[0].ID[:8]
	ask := func(session string) string {
		return run(t, dir, `{"session_id":"`+session+`","prompt":"what did we do about retries?"}`, "hook", "prompt", "--format", "markdown").out
	}
	if own := ask("sess-42"); strings.Contains(own, hid) {
		t.Errorf("the session's own handoff came back on its prompt:\n%s", own)
	}
	if other := ask("sess-43"); !strings.Contains(other, hid) {
		t.Errorf("another session's prompt lacks the recent handoff:\n%s", other)
	}
	// A session that only left files changed writes no handoff.
	run(t, dir, `{"session_id":"sess-idle","hook_event_name":"SessionStart"}`, "hook", "session-start")
	os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte("{}\n"), 0o644)
	tip = testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory")
	run(t, dir, `{"session_id":"sess-idle","hook_event_name":"Stop"}`, "hook", "stop")
	if testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory") != tip || len(listJSON(t, dir, "--type", "handoff", "--session", "sess-idle")) != 0 {
		t.Errorf("a session that left only uncommitted files wrote a handoff: %+v", listJSON(t, dir, "--type", "handoff", "--session", "sess-idle"))
	}
}

func TestPromptHookInjectsHotAndMatchingMemoryWithViewDecay(t *testing.T) {
	dir := testrepo.NewRepo(t)
	ok(t, dir, "import", writeJSONL(t, `{"content":"we moved session storage from redis to postgres because of eviction losses","type":"decision","created":"2026-01-05T10:00:00Z"}`,
		`{"content":"the nightly export job runs at 02:00 UTC","type":"reference","created":"2026-01-06T10:00:00Z"}`))
	ok(t, dir, "save", "handoff: half way through the export refactor", "--type", "handoff")

	prompt := func(text string) string {
		in, _ := json.Marshal(map[string]string{"session_id": "s1", "prompt": text})
		return run(t, dir, string(in), "hook", "prompt", "--format", "markdown").out
	}
	// No cue: only the hot item (saved in the last 24 hours).
	out := prompt("continue")
	if !strings.Contains(out, "half way through the export refactor") || strings.Contains(out, "redis") {
		t.Fatalf("prompt without cues:\n%s", out)
	}
	// A question brings matching older memory.
	q := "why did we move session storage away from redis?"
	out = prompt(q)
	if !strings.Contains(out, "## Related to this prompt") || !strings.Contains(out, "eviction losses") || strings.Contains(out, "nightly export") {
		t.Fatalf("prompt with a question:\n%s", out)
	}
	// View decay over the session: full three times, then a digest, then a stub.
	for i := 0; i < 2; i++ {
		out = prompt(q)
	}
	if !strings.Contains(out, "because of eviction losses") {
		t.Fatalf("third view should be full:\n%s", out)
	}
	for i := 0; i < 8; i++ {
		out = prompt(q)
	}
	if !strings.Contains(out, "shown 11 times this session") {
		t.Fatalf("eleventh view should be a stub:\n%s", out)
	}
	// Another session starts fresh; Claude's JSON is the default format.
	in, _ := json.Marshal(map[string]string{"session_id": "s2", "prompt": q})
	var res struct {
		HookSpecificOutput struct{ HookEventName, AdditionalContext string } `json:"hookSpecificOutput"`
	}
	json.Unmarshal([]byte(run(t, dir, string(in), "hook", "prompt").out), &res)
	if res.HookSpecificOutput.HookEventName != "UserPromptSubmit" || !strings.Contains(res.HookSpecificOutput.AdditionalContext, "because of eviction losses") {
		t.Fatalf("claude output for a new session: %+v", res)
	}
	// A short prompt is about what the session's prompts before it were
	// about: within the exchange (the capture buffer) and after the stop
	// hook folded it.
	say := func(session, text string) string {
		in, _ := json.Marshal(map[string]string{"session_id": session, "prompt": text})
		return run(t, dir, string(in), "hook", "prompt", "--format", "markdown").out
	}
	if out := say("s3", "go on"); strings.Contains(out, "eviction losses") {
		t.Fatalf("a short first prompt brought matches:\n%s", out)
	}
	say("s4", "we need to look at session storage on redis again")
	if out := say("s4", "go on"); !strings.Contains(out, "## Related to this prompt") || !strings.Contains(out, "eviction losses") {
		t.Fatalf("a short prompt lacks what the exchange's first prompt matched:\n%s", out)
	}
	run(t, dir, `{"session_id":"s4","hook_event_name":"Stop"}`, "hook", "stop")
	if out := say("s4", "what else?"); !strings.Contains(out, "eviction losses") {
		t.Fatalf("a short prompt after a stop lacks what the session's earlier prompts matched:\n%s", out)
	}
}

func writeJSONL(t *testing.T, lines ...string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	return f
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

// What a session start shows counts as a use, as a prompt's injection
// does: a demoted entry the agent was shown is back in use. An archived
// entry that search --include-archived finds is looked at, not used: it
// stays archived.
func TestSessionStartCountsUsesAndArchivedSearchesDoNot(t *testing.T) {
	dir := testrepo.NewRepo(t)
	commitFiles(t, dir, "server", "api/server.go")
	days := func(n int) string { return time.Now().AddDate(0, 0, -n).UTC().Format(time.RFC3339) }
	ok(t, dir, "import", writeJSONL(t, `{"content":"api/server.go leaks a goroutine per request","type":"issue","created":"`+days(20)+`"}`,
		`{"content":"handoff: the flaky upload test is half fixed","type":"handoff","created":"`+days(5)+`"}`))
	type change struct{ ID, From, To string }
	maintain := func() map[string]change {
		var rep struct{ Changes []change }
		if err := json.Unmarshal([]byte(ok(t, dir, "maintain", "--json")), &rep); err != nil {
			t.Fatal(err)
		}
		out := map[string]change{}
		for _, c := range rep.Changes {
			out[c.ID] = c
		}
		return out
	}
	ids := map[string]string{}
	for _, e := range listJSON(t, dir, "--include-archived") {
		ids[e.Type] = e.ID
	}
	first := maintain()
	if first[ids["issue"]].To != "ephemeral" || len(first) != 2 {
		t.Fatalf("first pass: %+v", first)
	}
	os.WriteFile(filepath.Join(dir, "api", "server.go"), []byte("changed\n"), 0o644)
	md := run(t, dir, `{"session_id":"use-1"}`, "hook", "session-start", "--format", "markdown").out
	if !strings.Contains(md, "leaks a goroutine") {
		t.Fatalf("the session start does not show the file's issue:\n%s", md)
	}
	if second := maintain(); second[ids["issue"]].To != "working" {
		t.Errorf("the issue the session start showed is not back in use: %+v", second)
	}
	if out := ok(t, dir, "search", "flaky upload", "--include-archived"); !strings.Contains(out, ids["handoff"][:8]) {
		t.Fatalf("search --include-archived lacks the archived handoff:\n%s", out)
	}
	if third := maintain(); len(third) != 0 || len(listJSON(t, dir, "--type", "handoff")) != 0 {
		t.Errorf("searching the archive revived the handoff: %+v", third)
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

// Issues saved with the CLI (which loads no model) form a recurring
// pattern as MCP saves do: the next session start embeds the recent issues
// that wait for a vector, lists the pattern and keeps its issues longterm,
// even behind a backlog of entries that wait too.
func TestPatternsFromCLISaves(t *testing.T) {
	dir := testrepo.NewRepo(t)
	var backlog []string
	for i := range 300 {
		backlog = append(backlog, fmt.Sprintf(`{"content":"build note %d: the linker took %d seconds","type":"reference"}`, i, i))
	}
	ok(t, dir, "import", writeJSONL(t, backlog...))
	for _, text := range []string{"TestSync times out on CI under load", "TestSync timed out again on the CI runner", "TestSync times out on CI under heavy load"} {
		ok(t, dir, "save", text, "--type", "issue")
	}
	md := run(t, dir, `{"session_id":"p1"}`, "hook", "session-start", "--format", "markdown").out
	if !strings.Contains(md, "## Recurring issues") || !strings.Contains(md, "[Pattern: seen 3 times since") {
		t.Fatalf("the session start lacks the CLI-saved pattern:\n%s", md)
	}
	for _, e := range listJSON(t, dir, "--type", "issue") {
		if e.Tier != "longterm" {
			t.Errorf("issue of a recurring pattern is %s, not longterm: %s", e.Tier, e.Content)
		}
	}
}

// A digest keeps a long first sentence whole: from its fourth showing in
// a session, an item is its first sentence, not a cut in its middle.
func TestPromptDigestKeepsTheFirstSentenceWhole(t *testing.T) {
	dir := testrepo.NewRepo(t)
	first := "The export job writes one file per tenant into the bucket named in EXPORT_BUCKET, compresses each with zstd at level 19, and signs the manifest with the key that the deploy pipeline rotates every ninety days."
	ok(t, dir, "save", first+" Restores read the manifest first and refuse unsigned ones.", "--type", "insight")
	var out string
	for range 4 {
		out = run(t, dir, `{"session_id":"digest-1","prompt":"continue"}`, "hook", "prompt", "--format", "markdown").out
	}
	if len(first) <= 200 || !strings.Contains(out, first+" …") || strings.Contains(out, "refuse unsigned") {
		t.Fatalf("the fourth showing is not the whole first sentence (%d characters):\n%s", len(first), out)
	}
}

// A correction found by its meaning alone is a pending rule at the
// session start too, once the model has embedded it (here, rules pending
// did): the hook reads the stored vectors of the entry and the templates.
func TestSessionStartShowsCorrectionsFoundByMeaning(t *testing.T) {
	dir := testrepo.NewRepo(t)
	const meant = "it is wrong, please do it differently"
	ok(t, dir, "save", meant, "--type", "insight")
	if out := ok(t, dir, "rules", "pending"); !strings.Contains(out, meant) {
		t.Fatalf("rules pending lacks the correction found by meaning:\n%s", out)
	}
	md := run(t, dir, `{"session_id":"m1"}`, "hook", "session-start", "--format", "markdown").out
	if !strings.Contains(md, "## Pending rules") || !strings.Contains(md, meant) {
		t.Fatalf("the session start lacks the correction rules pending lists:\n%s", md)
	}
}

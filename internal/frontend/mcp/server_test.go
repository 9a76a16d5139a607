package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

func TestMain(m *testing.M) { testrepo.Main(m) }

// call sends one JSON-RPC request to the server in process and returns
// the result's text (with any structured content as JSON) and whether it
// is a tool error.
func call(t *testing.T, h func(context.Context, json.RawMessage) any, id int, method string, params any) (string, bool) {
	t.Helper()
	p, _ := json.Marshal(params)
	msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p)
	b, err := json.Marshal(h(context.Background(), json.RawMessage(msg)))
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Result struct {
			IsError    bool `json:"isError"`
			Content    []struct{ Text string }
			Structured json.RawMessage `json:"structuredContent"`
			Tools      []struct{ Name string }
		}
		Error *struct{ Message string }
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		t.Fatalf("%s: %s", method, resp.Error.Message)
	}
	var text []string
	for _, c := range resp.Result.Content {
		text = append(text, c.Text)
	}
	if len(resp.Result.Structured) > 0 {
		text = append(text, string(resp.Result.Structured))
	}
	for _, tl := range resp.Result.Tools {
		text = append(text, tl.Name)
	}
	return strings.Join(text, "\n"), resp.Result.IsError
}

// The tools work in process: a save is found by search and list, bad
// arguments come back as tool errors, and the server stays up.
func TestToolsInProcess(t *testing.T) {
	dir := testrepo.NewRepo(t)
	sess, err := app.OpenSession(dir, app.Options{Warn: os.Stderr, Session: "sess-mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	srv := New(sess, "test")
	// another process's view, for checks beside the server
	svc, err := app.Open(dir, app.Options{Warn: os.Stderr, Session: "sess-mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	h := func(ctx context.Context, m json.RawMessage) any { return srv.HandleMessage(ctx, m) }

	call(t, h, 1, "initialize", map[string]any{"protocolVersion": "2025-03-26", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "0"}})
	names, _ := call(t, h, 2, "tools/list", map[string]any{})
	for _, want := range []string{"context_save", "context_search", "context_list", "context_session", "context_cochanges"} {
		if !strings.Contains(names, want) {
			t.Errorf("tools/list lacks %s", want)
		}
	}
	tool := func(id int, name string, args map[string]any) (string, bool) {
		return call(t, h, id, "tools/call", map[string]any{"name": name, "arguments": args})
	}
	if text, isErr := tool(3, "context_save", map[string]any{"content": "billing retries back off exponentially", "type": "decision", "tier": "longterm"}); isErr || !strings.Contains(text, `"tier":"longterm"`) {
		t.Fatalf("save does not reply with the stored tier: %s", text)
	}
	if text, _ := tool(4, "context_search", map[string]any{"query": "billing retries"}); !strings.Contains(text, "back off exponentially") {
		t.Errorf("search does not find the save: %s", text)
	}
	if text, _ := tool(19, "context_search", map[string]any{"query": "billing retries", "mode": "bm25"}); !strings.Contains(text, "back off exponentially") || !strings.Contains(text, `"billing retries" (bm25)`) {
		t.Errorf("a words-only search does not find the save or say its mode: %s", text)
	}
	if text, isErr := tool(20, "context_search", map[string]any{"query": "billing", "mode": "psychic"}); !isErr || !strings.Contains(text, "unknown search mode") {
		t.Errorf("an unknown mode is not a tool error: %s", text)
	}
	if text, _ := tool(18, "context_search", map[string]any{"query": "what did we decide about billing retries today"}); !strings.Contains(text, "back off exponentially") || !strings.Contains(text, `(time "today" → `) {
		t.Errorf("search does not say how it read the time: %s", text)
	}
	if text, _ := tool(5, "context_session", map[string]any{}); !strings.Contains(text, "back off exponentially") {
		t.Errorf("the session does not list the save: %s", text)
	}
	for _, bad := range []map[string]any{
		{"content": 7},
		{"content": "x", "type": "opinion"},
		{},
	} {
		if text, isErr := tool(6, "context_save", bad); !isErr {
			t.Errorf("save %v: not an error: %s", bad, text)
		}
	}
	if text, isErr := tool(7, "context_pin", map[string]any{"id": "ffffffff"}); !isErr {
		t.Errorf("pin of an unknown id: %s", text)
	}

	// an agent's archive skips pinned entries and says so
	pinned, err := svc.Memory().Save(context.Background(), app.SaveRequest{Content: "the deploy key lives in vault", Pinned: true})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := svc.Memory().Save(context.Background(), app.SaveRequest{Content: "an outdated note"})
	text, isErr := tool(8, "context_archive", map[string]any{"ids": []string{pinned.ID[:8], plain.ID[:8]}})
	if isErr || !strings.Contains(text, `"skipped_pinned":["`+pinned.ID[:8]+`"]`) || !strings.Contains(text, `"archived":["`+plain.ID+`"]`) {
		t.Errorf("archive of a pinned and a plain entry: %s", text)
	}
	// and its delete refuses them
	if text, isErr := tool(8, "context_delete", map[string]any{"id": pinned.ID[:8]}); !isErr || !strings.Contains(text, "pinned") {
		t.Errorf("delete of a pinned entry: error %v: %s", isErr, text)
	}
	if d, err := svc.Recall().Show(context.Background(), pinned.ID); err != nil || d.Archived {
		t.Errorf("the pinned entry was archived: %+v %v", d.Entry, err)
	}

	// corrections become rules over MCP
	corr, _ := svc.Memory().Save(context.Background(), app.SaveRequest{Content: "stop using npm, use pnpm", Tags: []string{app.TagCorrection}})
	wrong, _ := svc.Memory().Save(context.Background(), app.SaveRequest{Content: "never deploy on friday", Tags: []string{app.TagCorrection}})
	if text, _ := tool(9, "context_pending_rules", map[string]any{}); !strings.Contains(text, corr.ID[:8]) || !strings.Contains(text, wrong.ID[:8]) {
		t.Errorf("pending rules: %s", text)
	}
	if text, isErr := tool(10, "context_accept_rule", map[string]any{"id": corr.ID[:8], "label": "use-pnpm"}); isErr || !strings.Contains(text, `"label":"use-pnpm"`) {
		t.Errorf("accept: %s", text)
	}
	if text, isErr := tool(11, "context_dismiss_rule", map[string]any{"id": wrong.ID[:8]}); isErr {
		t.Errorf("dismiss: %s", text)
	}
	if text, _ := tool(12, "context_pending_rules", map[string]any{}); text != "no pending rules" {
		t.Errorf("pending after accept and dismiss: %s", text)
	}
	if text, _ := tool(13, "context_list_rules", map[string]any{}); !strings.Contains(text, "stop using npm, use pnpm") {
		t.Errorf("the accepted rule is not listed: %s", text)
	}

	// context_git_index checks repo_path, takes days; context_session a type
	if text, isErr := tool(14, "context_git_index", map[string]any{"repo_path": t.TempDir()}); !isErr || !strings.Contains(text, "not this server's repository") {
		t.Errorf("git_index of another repository: %s", text)
	}
	if text, isErr := tool(15, "context_git_index", map[string]any{"repo_path": svc.Root(), "days": 30}); isErr {
		t.Errorf("git_index of its own repository: %s", text)
	}
	branch := strings.TrimSpace(testrepo.Git(t, svc.Root(), "branch", "--show-current"))
	if text, _ := tool(17, "context_search", map[string]any{"query": "initial", "types": []string{"git_commit"}}); !strings.Contains(text, "git_commit") || !strings.Contains(text, "· on "+branch) || !strings.Contains(text, `"branch":"`+branch+`"`) {
		t.Errorf("a commit's head does not name its branch %q: %s", branch, text)
	}
	if text, _ := tool(16, "context_session", map[string]any{"type": "decision"}); !strings.Contains(text, "back off exponentially") || strings.Contains(text, "outdated note") {
		t.Errorf("session of type decision: %s", text)
	}
}

// Serve warms the session a second after it starts, in its turn among
// the calls, and returns once its input ends, its warm-up cancelled or
// over: a server whose agent left at once, and one that stayed past the
// warm-up and then asked for a search.
func TestServeWarmsAndEnds(t *testing.T) {
	dir := testrepo.NewRepo(t)
	sess, err := app.OpenSession(dir, app.Options{Warn: os.Stderr, Session: "sess-warm"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var out strings.Builder
	if err := Serve(context.Background(), sess, "test", strings.NewReader(""), &out, os.Stderr); err != nil {
		t.Fatalf("a server whose input ended at once: %v", err)
	}
	in, w := io.Pipe()
	res := make(chan error, 1)
	var got safeBuffer
	go func() { res <- Serve(context.Background(), sess, "test", in, &got, os.Stderr) }()
	time.Sleep(warmAfter + 300*time.Millisecond) // the warm-up has begun, or is over
	fmt.Fprintln(w, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	fmt.Fprintln(w, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"context_search","arguments":{"query":"anything"}}}`)
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(got.String(), `"id":2`); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no answer to a search after the warm-up: %s", got.String())
		}
	}
	w.Close()
	if err := <-res; err != nil {
		t.Fatalf("a server after its warm-up: %v", err)
	}
	if answer := got.String(); !strings.Contains(answer, `"id":2,"result"`) || strings.Contains(answer, `"isError":true`) {
		t.Fatalf("the search after the warm-up failed: %s", answer)
	}
}

// safeBuffer is a strings.Builder that one goroutine writes and another
// reads.
type safeBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// rpc sends one JSON-RPC request in process and decodes its result into
// out, failing the test on a protocol error.
func rpc(t *testing.T, h func(context.Context, json.RawMessage) any, method string, params, out any) {
	t.Helper()
	p, _ := json.Marshal(params)
	b, err := json.Marshal(h(context.Background(), json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, p))))
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Result json.RawMessage
		Error  *struct{ Message string }
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		t.Fatalf("%s %s: %s", method, p, resp.Error.Message)
	}
	if err := json.Unmarshal(resp.Result, out); err != nil {
		t.Fatalf("%s: %v\n%s", method, err, resp.Result)
	}
}

// Clients that use resources and prompts get the session context, the
// rules and any entry as resources, and the consolidation and correction
// reviews as prompts; context_suggest answers "what else usually changes".
func TestResourcesPromptsAndSuggest(t *testing.T) {
	dir := testrepo.NewRepo(t)
	for range 3 {
		for _, f := range []string{"billing/retry.go", "billing/retry_test.go"} {
			os.MkdirAll(filepath.Join(dir, "billing"), 0o755)
			os.WriteFile(filepath.Join(dir, f), []byte(fmt.Sprint(os.Getpid(), f, testrepo.Git(t, dir, "rev-parse", "HEAD"))), 0o644)
		}
		testrepo.Git(t, dir, "add", "-A")
		testrepo.Git(t, dir, "commit", "-q", "-m", "billing retries")
	}
	// the stand-in for the model: the consolidate prompt compares meanings
	sess, err := app.OpenSession(dir, app.Options{Warn: os.Stderr, Embedder: testrepo.WordEmbedder{}})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	srv := New(sess, "test")
	h := func(ctx context.Context, m json.RawMessage) any { return srv.HandleMessage(ctx, m) }
	svc, err := app.Open(dir, app.Options{Warn: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	ctx := context.Background()
	decision, _ := svc.Memory().Save(ctx, app.SaveRequest{Content: "billing retries back off 1/4/16 s", Type: "decision"})
	rule, _ := svc.Memory().Save(ctx, app.SaveRequest{Content: "always run the billing tests before pushing", Type: "rule"})
	corr, _ := svc.Memory().Save(ctx, app.SaveRequest{Content: "stop using npm, use pnpm", Tags: []string{app.TagCorrection}})

	var init struct {
		Capabilities map[string]any
	}
	rpc(t, h, "initialize", map[string]any{"protocolVersion": "2025-03-26", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "0"}}, &init)
	for _, c := range []string{"tools", "resources", "prompts"} {
		if init.Capabilities[c] == nil {
			t.Errorf("initialize does not offer %s: %v", c, init.Capabilities)
		}
	}
	var list struct {
		Resources []struct{ URI, MimeType string }
	}
	rpc(t, h, "resources/list", map[string]any{}, &list)
	var templates struct {
		ResourceTemplates []struct{ URITemplate string }
	}
	rpc(t, h, "resources/templates/list", map[string]any{}, &templates)
	if len(list.Resources) != 2 || list.Resources[0].MimeType != "text/markdown" || len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "synaptic://entries/{id}" {
		t.Errorf("resources %+v, templates %+v", list.Resources, templates.ResourceTemplates)
	}
	read := func(uri string) string {
		var res struct{ Contents []struct{ URI, Text string } }
		rpc(t, h, "resources/read", map[string]any{"uri": uri}, &res)
		if len(res.Contents) != 1 || res.Contents[0].URI != uri {
			t.Fatalf("read %s: %+v", uri, res)
		}
		return res.Contents[0].Text
	}
	if text := read("synaptic://context"); !strings.Contains(text, "always run the billing tests") || !strings.Contains(text, "back off 1/4/16") {
		t.Errorf("the session context lacks the rule or the decision:\n%s", text)
	}
	if text := read("synaptic://rules"); !strings.Contains(text, rule.ID[:8]) || strings.Contains(text, decision.ID[:8]) {
		t.Errorf("rules:\n%s", text)
	}
	for _, id := range []string{decision.ID, rule.ID[:8]} { // one after the other: each read names its own entry
		want := decision.ID
		if id != decision.ID {
			want = rule.ID
		}
		if text := read("synaptic://entries/" + id); !strings.Contains(text, "# Memory entry "+want) || !strings.Contains(text, "by Test User <test@example.com> (you)") {
			t.Errorf("entry %s:\n%s", id, text)
		}
	}

	var prompts struct{ Prompts []struct{ Name string } }
	rpc(t, h, "prompts/list", map[string]any{}, &prompts)
	if len(prompts.Prompts) != 2 {
		t.Errorf("prompts: %+v", prompts)
	}
	prompt := func(name string) string {
		var res struct {
			Messages []struct {
				Role    string
				Content struct{ Text string }
			}
		}
		rpc(t, h, "prompts/get", map[string]any{"name": name}, &res)
		if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
			t.Fatalf("prompt %s: %+v", name, res)
		}
		return res.Messages[0].Content.Text
	}
	if text := prompt("review_corrections"); !strings.Contains(text, corr.ID[:8]) || !strings.Contains(text, "context_accept_rule") {
		t.Errorf("review_corrections:\n%s", text)
	}
	if text := prompt("consolidate"); !strings.Contains(text, "nothing to consolidate") {
		t.Errorf("consolidate with nothing alike:\n%s", text)
	}

	text, isErr := call(t, h, 2, "tools/call", map[string]any{"name": "context_suggest", "arguments": map[string]any{"files": []string{"billing/retry.go"}}})
	if isErr || !strings.Contains(text, "billing/retry_test.go (3 times") || !strings.Contains(text, `"changed":["billing/retry.go"]`) {
		t.Errorf("context_suggest: %s", text)
	}
	if text, isErr := call(t, h, 3, "tools/call", map[string]any{"name": "context_suggest", "arguments": map[string]any{"limit": 0}}); !isErr {
		t.Errorf("context_suggest with limit 0: %s", text)
	}
}

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
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

package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkMCPSearch100k times context_search through a running MCP server
// (warm process) over 100k entries: the latency an agent sees.
func BenchmarkMCPSearch100k(b *testing.B) {
	dir := repoWith(b, scale(100000))
	run(b, dir, "embed") // searches then measure the warm model, not embedding
	cmd := exec.Command(bin, "mcp")
	cmd.Dir = dir
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	out := bufio.NewReader(outPipe)
	id := 0
	call := func(method string, params any) time.Duration {
		id++
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		start := time.Now()
		in.Write(append(req, '\n'))
		for {
			line, err := out.ReadString('\n')
			if err != nil {
				b.Fatalf("%s: %v", method, err)
			}
			var r struct{ ID int }
			if json.Unmarshal([]byte(line), &r) == nil && r.ID == id {
				return time.Since(start)
			}
		}
	}
	call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "1"}})
	in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	queries := []string{"flaky timeout in ci pipeline", "postgres migration rollback", "why did we choose redis", "embedding model latency", "kubernetes helm deploy", "auth token session login bug"}
	call("tools/call", map[string]any{"name": "context_search", "arguments": map[string]any{"query": "warm up"}})
	var ds []time.Duration
	for i := 0; i < 60; i++ {
		ds = append(ds, call("tools/call", map[string]any{"name": "context_search", "arguments": map[string]any{"query": fmt.Sprint(queries[i%len(queries)]), "limit": 10}}))
	}
	b.ReportMetric(ms(median(ds)), "ms/mcp-search-median")
}

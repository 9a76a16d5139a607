package bench

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// mcpServer starts the MCP server in dir, initialises it, and returns a
// function that sends one request and times its answer.
func mcpServer(b *testing.B, dir string) func(method string, params any) time.Duration {
	_, call, _ := mcpServerEnv(b, dir, nil)
	return call
}

// mcpServerEnv is mcpServer with extra environment; it also returns the
// process and a function that stops it (which cleanup calls too).
func mcpServerEnv(b *testing.B, dir string, env []string) (*exec.Cmd, func(method string, params any) time.Duration, func()) {
	cmd := exec.Command(bin, "mcp")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { in.Close(); cmd.Wait() }) }
	b.Cleanup(stop)
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
	return cmd, call, stop
}

// search is a context_search call with extra arguments.
func search(query string, extra ...string) map[string]any {
	args := map[string]any{"query": query, "limit": 10}
	for i := 0; i+1 < len(extra); i += 2 {
		args[extra[i]] = extra[i+1]
	}
	return map[string]any{"name": "context_search", "arguments": args}
}

var benchQueries = []string{"flaky timeout in ci pipeline", "postgres migration rollback", "why did we choose redis", "embedding model latency", "kubernetes helm deploy", "auth token session login bug"}

// BenchmarkMCPSearch100k times context_search through a running MCP server
// (warm process) over 100k entries: the latency an agent sees.
func BenchmarkMCPSearch100k(b *testing.B) {
	dir := repoWith(b, scale(100000))
	run(b, dir, "embed") // searches then measure the warm model, not embedding
	call := mcpServer(b, dir)
	call("tools/call", search("warm up"))
	time.Sleep(thinkTime) // what the server reads in the background once open (the lexicon)
	// hybrid and words-only searches interleaved, so that both see the same machine load
	var hybrid, bm25 []time.Duration
	for i := 0; i < 60; i++ {
		q := benchQueries[i%len(benchQueries)]
		hybrid = append(hybrid, call("tools/call", search(q)))
		bm25 = append(bm25, call("tools/call", search(q, "mode", "bm25")))
	}
	b.ReportMetric(ms(median(hybrid)), "ms/mcp-search-median")
	b.ReportMetric(ms(median(bm25)), "ms/mcp-bm25-median")
	b.ReportMetric(float64(median(hybrid))/float64(median(bm25)), "x-warm-hybrid/bm25")
}

package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// BenchmarkProjects20 times memory beyond one repository: 20 projects of
// 10k entries each (and 50 rules and 50 longterm insights each), all
// embedded. It reports search --all-projects from a cold CLI (hybrid and
// BM25, interleaved), the same through a warm MCP server (scope all), and
// the session-start hook with and without the "From other projects"
// section (interleaved).
func BenchmarkProjects20(b *testing.B) {
	list := filepath.Join(b.TempDir(), "projects.json")
	b.Setenv("GIT_SYNAPTIC_PROJECTS", list)
	var dirs []string
	for p := range 20 {
		dir := testrepo.NewRepo(b)
		importEntries(b, dir, scale(10000), 5000, int64(p+1))
		importKnowledge(b, dir, p)
		testrepo.Git(b, dir, "repack", "-adq")
		run(b, dir, "init", "--no-hooks")
		run(b, dir, "embed")
		dirs = append(dirs, dir)
	}
	here := dirs[0]
	var hybrid, bm25 []time.Duration
	for i := 0; i < 21; i++ {
		q := benchQueries[i%len(benchQueries)]
		_, d := run(b, here, "search", "--all-projects", q, "-n", "10")
		hybrid = append(hybrid, d)
		_, d = run(b, here, "search", "--all-projects", q, "-n", "10", "--mode", "bm25")
		bm25 = append(bm25, d)
	}
	b.ReportMetric(ms(median(hybrid)), "ms/all-projects-cold-hybrid-median")
	b.ReportMetric(ms(median(bm25)), "ms/all-projects-cold-bm25-median")

	var with, without []time.Duration
	for i := 0; i < 21; i++ {
		_, d := run(b, here, "hook", "session-start", "--format", "markdown")
		with = append(with, d)
		testrepo.Git(b, here, "config", "synaptic.crossProject", "false")
		_, d = run(b, here, "hook", "session-start", "--format", "markdown")
		without = append(without, d)
		testrepo.Git(b, here, "config", "--unset", "synaptic.crossProject")
	}
	b.ReportMetric(ms(median(with)), "ms/session-start-cross-median")
	b.ReportMetric(ms(median(without)), "ms/session-start-alone-median")

	call := mcpServer(b, here)
	call("tools/call", search("warm up", "scope", "all"))
	var warm []time.Duration
	for i := 0; i < 60; i++ {
		warm = append(warm, call("tools/call", search(benchQueries[i%len(benchQueries)], "scope", "all")))
	}
	b.ReportMetric(ms(median(warm)), "ms/all-projects-mcp-median")
}

// importKnowledge adds 50 shared rules and 50 longterm insights to
// project p: what "From other projects" chooses from.
func importKnowledge(b *testing.B, dir string, p int) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range 50 {
		enc.Encode(map[string]any{"type": "rule", "content": fmt.Sprintf("always %s before %s in project %d (rule %d)", vocabulary[(p+i)%len(vocabulary)], vocabulary[(3*p+7*i)%len(vocabulary)], p, i)})
		enc.Encode(map[string]any{"type": "insight", "tier": "longterm", "content": fmt.Sprintf("%s breaks %s when %s (project %d, insight %d)", vocabulary[(5*p+i)%len(vocabulary)], vocabulary[(p+11*i)%len(vocabulary)], vocabulary[(7*p+3*i)%len(vocabulary)], p, i)})
	}
	f := filepath.Join(b.TempDir(), "knowledge.jsonl")
	os.WriteFile(f, buf.Bytes(), 0o644)
	run(b, dir, "import", f)
}

package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// BenchmarkRealBranches measures what memory's standing against the code
// costs (branch marks and stale files): on a real clone with 5,000
// entries anchored across 50 branches (half of them merged back, some
// naming files that main changed since), the session start and a search,
// each with the checks and without them (GIT_SYNAPTIC_CODE_CHECKS=off),
// interleaved, median of 15. Both run without the warm process, so that
// each call pays the whole check (the warm process keeps the verdicts of
// its HEAD in memory). ms/*-after-commit are the first calls after HEAD
// moves, when every anchor is judged afresh.
func BenchmarkRealBranches(b *testing.B) {
	forEachReal(b, func(b *testing.B, dir string) {
		cold := []string{"GIT_SYNAPTIC_DAEMON=off"}
		off := []string{"GIT_SYNAPTIC_DAEMON=off", "GIT_SYNAPTIC_CODE_CHECKS=off"}
		files := strings.Fields(testrepo.Git(b, dir, "ls-tree", "-r", "--name-only", "HEAD"))
		main := strings.TrimSpace(testrepo.Git(b, dir, "symbolic-ref", "--short", "HEAD"))
		testrepo.Git(b, dir, "checkout", "-q", "-f", main)
		start := time.Now()
		const branches, perBranch = 50, 100
		rng := rand.New(rand.NewSource(7))
		for i := range branches {
			name := fmt.Sprintf("feature/b%02d", i)
			testrepo.Git(b, dir, "checkout", "-q", "-b", name, fmt.Sprintf("%s~%d", main, 1+i*7))
			for c := range 2 {
				// a file of the branch's own: merges back cleanly
				f := fmt.Sprintf("bench-branches/b%02d.txt", i)
				os.MkdirAll(filepath.Join(dir, "bench-branches"), 0o755)
				appendTo(b, dir, f, fmt.Sprintf("%s change %d\n", name, c))
				testrepo.Git(b, dir, "add", "--", f)
				testrepo.Git(b, dir, "commit", "-q", "-m", fmt.Sprintf("%s: change %d", name, c))
				importNaming(b, dir, rng, files, perBranch/2, fmt.Sprintf("%d-%d", i, c))
			}
			testrepo.Git(b, dir, "checkout", "-q", main)
			if i%2 == 0 {
				testrepo.Git(b, dir, "merge", "-q", "--no-ff", "-m", "merge "+name, name)
			}
		}
		// main moves on: files memory names change
		for c := range 10 {
			appendTo(b, dir, files[rng.Intn(len(files))], fmt.Sprintf("/* main %d */\n", c))
			testrepo.Git(b, dir, "commit", "-q", "-am", fmt.Sprintf("main change %d", c))
		}
		testrepo.Git(b, dir, "gc", "-q")
		b.ReportMetric(time.Since(start).Seconds(), "s/setup")
		out, _ := run(b, dir, "verify", "--json")
		var rep struct {
			Checked int `json:"checked"`
			Stale   []struct {
				ID string `json:"id"`
			} `json:"stale"`
		}
		json.Unmarshal([]byte(out), &rep)
		b.ReportMetric(float64(rep.Checked), "entries-naming-files")
		b.ReportMetric(float64(len(rep.Stale)), "stale")
		out, _ = run(b, dir, "list", "-n", "0", "--json")
		b.ReportMetric(float64(strings.Count(out, `"unmerged"`)), "unmerged")

		hook, _ := json.Marshal(map[string]string{"session_id": "bench", "prompt": "x"})
		calls := []struct {
			name, stdin string
			args        []string
		}{
			{"session-start", string(hook), []string{"hook", "session-start"}},
			{"search", "", []string{"search", "window pane resize status line"}},
		}
		times := map[string][]time.Duration{}
		for range 15 {
			for _, c := range calls {
				_, d := runEnvB(b, dir, cold, c.stdin, c.args...)
				times[c.name+"-checks"] = append(times[c.name+"-checks"], d)
				_, d = runEnvB(b, dir, off, c.stdin, c.args...)
				times[c.name+"-off"] = append(times[c.name+"-off"], d)
			}
		}
		for _, c := range calls {
			with, without := median(times[c.name+"-checks"]), median(times[c.name+"-off"])
			b.ReportMetric(ms(with), "ms/"+c.name+"-checks")
			b.ReportMetric(ms(without), "ms/"+c.name+"-off")
			b.ReportMetric(float64(with)/float64(without), "x/"+c.name)
		}
		// the first call after HEAD moves judges every anchor again
		var first []time.Duration
		for i := range 5 {
			appendTo(b, dir, "bench.txt", fmt.Sprintf("%d\n", i))
			testrepo.Git(b, dir, "add", "bench.txt")
			testrepo.Git(b, dir, "commit", "-q", "-m", fmt.Sprintf("bench %d", i))
			_, d := runEnvB(b, dir, cold, "", "search", "window pane resize status line")
			first = append(first, d)
		}
		b.ReportMetric(ms(median(first)), "ms/search-after-commit")
	})
}

// appendTo appends text to the file at path in dir.
func appendTo(b *testing.B, dir, path, text string) {
	b.Helper()
	f, err := os.OpenFile(filepath.Join(dir, path), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	f.WriteString(text)
	f.Close()
}

// importNaming imports n entries at HEAD, a third of them naming one of
// files by its path.
func importNaming(b *testing.B, dir string, rng *rand.Rand, files []string, n int, tag string) {
	b.Helper()
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocabulary)-1))
	types := []string{"decision", "insight", "issue", "reference"}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for k := range n {
		text := sentence(rng, zipf)
		if k%3 == 0 {
			text += " (see " + files[rng.Intn(len(files))] + ")"
		}
		enc.Encode(map[string]any{"content": text, "type": types[rng.Intn(len(types))], "created": time.Now().Add(-time.Duration(rng.Intn(60*24)) * time.Hour),
			"session_id": "branches-" + tag})
	}
	f := filepath.Join(b.TempDir(), "batch.jsonl")
	os.WriteFile(f, buf.Bytes(), 0o644)
	run(b, dir, "import", f)
}

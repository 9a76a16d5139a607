package bench

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// BenchmarkWarm10k and BenchmarkRealWarm measure what an agent pays per
// prompt with the warm process (git synaptic daemon) and without it,
// against the binary's bare start (--version), in one run, interleaved:
// hook prompt with cues, hook session-start, and a CLI search, hybrid and
// BM25. Memory is embedded first, as the hooks and searches leave it.
func BenchmarkWarm10k(b *testing.B) {
	dir := repoWith(b, scale(10000))
	run(b, dir, "embed")
	benchWarm(b, dir, "which retry backoff did we choose for the billing worker?")
}

func BenchmarkRealWarm(b *testing.B) {
	forEachReal(b, func(b *testing.B, dir string) {
		// the files checked out, as a user has them: in cloneReal's
		// clone every file reads as deleted, and the session start would
		// look up memory and co-changes for ten of them
		testrepo.Git(b, dir, "checkout-index", "--all", "--force")
		run(b, dir, "init")
		run(b, dir, "save", "TestSync times out on CI under load", "--type", "issue")
		run(b, dir, "index")
		run(b, dir, "embed")
		benchWarm(b, dir, "why is the sync test slow?")
	})
}

func benchWarm(b *testing.B, dir, prompt string) {
	warm := []string{"GIT_SYNAPTIC_DAEMON=on", "XDG_RUNTIME_DIR=" + b.TempDir()}
	cold := []string{"GIT_SYNAPTIC_DAEMON=off"}
	defer runEnvB(b, dir, warm, "", "daemon", "stop")
	runEnvB(b, dir, warm, "", "search", "warm up")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out, _ := runEnvB(b, dir, warm, "", "daemon", "status", "--json")
		if strings.Contains(out, `"running": true`) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the daemon did not start")
		}
	}
	hook := func(i int) string {
		in, _ := json.Marshal(map[string]string{"session_id": fmt.Sprintf("bench-%d", i), "prompt": prompt})
		return string(in)
	}
	type call struct {
		name, stdin string
		args        []string
	}
	calls := func(i int) []call {
		return []call{
			{"prompt", hook(i), []string{"hook", "prompt"}},
			{"session-start", hook(i), []string{"hook", "session-start"}},
			{"search-hybrid", "", []string{"search", prompt}},
			{"search-bm25", "", []string{"search", "--mode", "bm25", prompt}},
		}
	}
	times := map[string][]time.Duration{}
	for i := range 15 {
		_, d := runEnvB(b, dir, nil, "", "--version")
		times["bare"] = append(times["bare"], d)
		for _, c := range calls(i) {
			for _, mode := range []struct {
				name string
				env  []string
			}{{"warm", warm}, {"cold", cold}} {
				_, d := runEnvB(b, dir, mode.env, c.stdin, c.args...)
				times[c.name+"-"+mode.name] = append(times[c.name+"-"+mode.name], d)
			}
		}
	}
	bare := median(times["bare"])
	b.ReportMetric(ms(bare), "ms/bare-start")
	for _, name := range []string{"prompt", "session-start", "search-hybrid", "search-bm25"} {
		for _, mode := range []string{"warm", "cold"} {
			m := median(times[name+"-"+mode])
			b.ReportMetric(ms(m), "ms/"+name+"-"+mode)
			if name == "prompt" || name == "session-start" {
				b.ReportMetric(float64(m)/float64(bare), "x-bare/"+name+"-"+mode)
			}
		}
	}
	for _, mode := range []string{"warm", "cold"} {
		b.ReportMetric(float64(median(times["search-hybrid-"+mode]))/float64(median(times["search-bm25-"+mode])), "x-bm25/hybrid-"+mode)
	}
}

// runEnvB runs the binary in dir with extra environment and stdin.
func runEnvB(b *testing.B, dir string, env []string, stdin string, args ...string) (string, time.Duration) {
	b.Helper()
	r, err := testrepo.RunBinary(bin, dir, stdin, env, args...)
	if err != nil || r.Code != 0 {
		b.Fatalf("git-synaptic %s: exit %d %v\n%s", strings.Join(args, " "), r.Code, err, r.Err)
	}
	return r.Out, r.Took
}

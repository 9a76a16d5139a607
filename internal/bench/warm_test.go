package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/embed"
	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/config"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// BenchmarkWarm10k and BenchmarkRealWarm measure what an agent pays per
// prompt with the warm process (git synaptic daemon) and without it,
// against the whole program's bare start (git-synaptic-core --version:
// git-synaptic --version runs the small program first), in one run,
// interleaved:
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
	waitDaemonB(b, dir, warm)
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
		r, err := testrepo.RunBinary(filepath.Join(filepath.Dir(bin), "git-synaptic-core"), dir, "", nil, "--version")
		if err != nil || r.Code != 0 {
			b.Fatalf("git-synaptic-core --version: exit %d %v\n%s", r.Code, err, r.Err)
		}
		times["bare"] = append(times["bare"], r.Took)
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
// waitDaemonB waits until the warm process of env runs.
func waitDaemonB(b *testing.B, dir string, env []string) {
	b.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out, _ := runEnvB(b, dir, env, "", "daemon", "status", "--json")
		if strings.Contains(out, `"running": true`) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatal("the daemon did not start")
		}
	}
}

func runEnvB(b *testing.B, dir string, env []string, stdin string, args ...string) (string, time.Duration) {
	b.Helper()
	r, err := testrepo.RunBinary(bin, dir, stdin, env, args...)
	if err != nil || r.Code != 0 {
		b.Fatalf("git-synaptic %s: exit %d %v\n%s", strings.Join(args, " "), r.Code, err, r.Err)
	}
	return r.Out, r.Took
}

// BenchmarkPromptInProcess times, in process over the Warm10k memory,
// what the warm process does for a prompt hook, and the query's embedding
// alone: back to back, and after 50 ms of idleness before each, as a
// prompt follows the agent's own work (the CPU's caches then hold other
// things than the model's weights and memory's rows).
func BenchmarkPromptInProcess(b *testing.B) {
	dir := repoWith(b, scale(10000))
	run(b, dir, "embed")
	models := &app.WarmModels{}
	defer models.Close()
	opts := config.FromEnv(app.Options{Warn: io.Discard, LoadEmbedder: models.Load})
	sess, err := app.OpenSession(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	ctx := context.Background()
	const prompt = "which retry backoff did we choose for the billing worker?"
	m, err := models.Load(cmp.Or(opts.Model, embed.DefaultModel), opts.EmbedBackend)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	steps := map[string]func() error{
		"prompt": func() error {
			n++
			return sess.DoAs(ctx, opts.Per(), func(s *app.Service) error {
				_, err := s.Agent().PromptContext(ctx, fmt.Sprintf("bench-%d", n%20), prompt, 0)
				return err
			})
		},
		"embed": func() error { _, err := m.Embed(ctx, []string{prompt}); return err },
	}
	for name, step := range steps {
		for _, idle := range []time.Duration{0, 50 * time.Millisecond} {
			var ds []time.Duration
			for i := range 120 {
				time.Sleep(idle)
				start := time.Now()
				if err := step(); err != nil {
					b.Fatal(err)
				}
				if i >= 20 { // the first ones fill what the process holds
					ds = append(ds, time.Since(start))
				}
			}
			what := "back-to-back"
			if idle > 0 {
				what = "after-idle"
			}
			b.ReportMetric(ms(median(ds)), "ms/"+name+"-"+what)
		}
	}
}

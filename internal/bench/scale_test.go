package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/embed"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/git-synaptic/git-synaptic/memory"
)

// BenchmarkScale1M measures an organisation's memory on one machine:
// BENCH_ENTRIES entries (default 1,000,000; BENCH_SCALE=small divides by
// ten) generated from a real repository's commit messages (corpus) and
// saved beside that repository's own commits, indexed. It reports, in one
// run: import and embedding throughput, CLI and MCP save, warm MCP hybrid
// and BM25 search, the recall@10 of the MCP server's vector stage against
// exact search, the first page of list and log, the session-start and
// prompt hooks against the same repository at 10k entries (interleaved),
// git gc, a cold reindex, the first push, a fresh clone and its first
// command, a sync of 10k new entries, sizes on disk and peak RSS.
//
// At a million entries it runs for well over an hour (embedding alone is
// about 50 minutes on 2 cores), so only a run that names it (make bench
// BENCH=1M) or sets BENCH_ENTRIES runs it.
func BenchmarkScale1M(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("BENCH_ENTRIES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10_000 {
			b.Fatalf("BENCH_ENTRIES=%q: a number of entries, at least 10000", v)
		}
	} else if !strings.Contains(flag.Lookup("test.bench").Value.String(), "1M") {
		b.Skip("about 90 minutes at a million entries: make bench BENCH=1M, or BENCH_ENTRIES=N for another size")
	}
	n = scale(n)
	src := realRepos(b)[0]
	// the bench's commands run with the warm process off (testrepo.Isolate);
	// what a user runs is measured with it on, as a user has it
	s := &scaleRun{b: b, warm: []string{"GIT_SYNAPTIC_DAEMON=on", "XDG_RUNTIME_DIR=" + b.TempDir()}}
	ref := s.repo(src, scale(10_000), "10k", true)
	big := s.repo(src, n, "big", true)
	defer runEnvB(b, big, s.warm, "", "daemon", "stop")
	s.sizes(big)
	s.timeOnce(big, "s/git-gc", "git", "gc", "--quiet")
	s.sizes(big)
	s.saves(big)
	s.mcp(big)
	s.vectorRecall(big)
	s.pages(big)
	s.hooks(ref, big)
	s.reindex(big)
	s.share(big)
}

// BenchmarkLexiconMillion compares, in process, BM25 searches ranked by FTS5
// (what a command run once does) with the same searches ranked by the
// lexicon a long-lived process holds (cache.HoldLexicon), over
// BENCH_ENTRIES generated entries (default 1,000,000; not embedded: BM25
// only) beside a real repository's commits: the corpus's queries, for 10
// and 20 results, interleaved; medians. It reports the time and heap the
// lexicon took to read, and fails if any search differs in its entries,
// their order or their BM25. About 10 minutes at a million entries, so
// only a run that names it (make bench BENCH=Lexicon) runs it.
func BenchmarkLexiconMillion(b *testing.B) {
	if !strings.Contains(flag.Lookup("test.bench").Value.String(), "Lexicon") {
		b.Skip("about 10 minutes at a million entries: make bench BENCH=Lexicon")
	}
	n := 1_000_000
	if v := os.Getenv("BENCH_ENTRIES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10_000 {
			b.Fatalf("BENCH_ENTRIES=%q: a number of entries, at least 10000", v)
		}
	}
	s := &scaleRun{b: b}
	dir := s.repo(realRepos(b)[0], scale(n), "big", false)
	ctx := context.Background()
	path := filepath.Join(dir, ".git", "synaptic", "cache.db")
	fts, _, err := cache.Open(path, 5*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer fts.Close()
	held, _, err := cache.Open(path, 5*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer held.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	held.HoldLexicon()
	if !held.WaitLexicon(ctx) {
		b.Fatal("the lexicon could not be read")
	}
	s.report(time.Since(start).Seconds(), "s/lexicon-read")
	runtime.GC()
	runtime.ReadMemStats(&after)
	s.report(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB-lexicon-heap")
	queries := append([]string{"why does " + s.corpus.queries[0] + "?"}, s.corpus.queries...)
	var byFTS, byLexicon []time.Duration
	for _, limit := range []int{10, 20} {
		for _, q := range queries {
			f := cache.Filter{Limit: limit}
			t0 := time.Now()
			want, err := fts.Search(ctx, q, f)
			byFTS = append(byFTS, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
			t0 = time.Now()
			got, err := held.Search(ctx, q, f)
			byLexicon = append(byLexicon, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
			if len(got) != len(want) {
				b.Fatalf("%q: %d results from the lexicon, %d from FTS5", q, len(got), len(want))
			}
			for i := range got {
				if got[i].ID != want[i].ID || got[i].BM25 != want[i].BM25 {
					b.Fatalf("%q, result %d: the lexicon gives %s (%v), FTS5 %s (%v)", q, i, got[i].ID, got[i].BM25, want[i].ID, want[i].BM25)
				}
			}
		}
	}
	s.report(ms(median(byFTS)), "ms/bm25-fts5-median")
	s.report(ms(median(byLexicon)), "ms/bm25-lexicon-median")
}

// thinkTime is the pause after a long-lived process's first request
// before the requests whose medians are reported, as a user takes it to
// write a first prompt: what the process reads in the background when it
// opens a repository (the lexicon: 3 s at a million entries) is then
// read, as it is for a user. The first request is reported on its own.
const thinkTime = 10 * time.Second

// scaleRun holds a BenchmarkScale1M run: the real repository's corpus
// and the environment of the warm process.
type scaleRun struct {
	b      *testing.B
	corpus *corpus
	warm   []string
}

// report records a figure and prints it at once: a run of an hour that
// fails late still leaves what it measured.
func (s *scaleRun) report(v float64, unit string) {
	s.b.ReportMetric(v, unit)
	fmt.Fprintf(os.Stderr, "scale: %s %.3f %s\n", s.b.Name(), v, unit)
}

// run runs what a user runs: the binary with the warm process on.
func (s *scaleRun) run(dir string, args ...string) (string, time.Duration) {
	return runEnvB(s.b, dir, s.warm, "", args...)
}

// build runs a step that builds the repository, with the warm process off
// so that it embeds nothing in the background while embed runs.
func (s *scaleRun) build(dir string, args ...string) (string, time.Duration) {
	return runEnvB(s.b, dir, nil, "", args...)
}

// repo clones src with its files, indexes its commits and imports n
// generated entries into it in commits of 10k, then, if embed, embeds
// them; it reports the throughput of both under name.
//
// BENCH_FIXTURE=DIR keeps what it built (before anything is measured) in
// DIR, and a later run with the same DIR, size and repository copies it
// from there instead of building it again: at a million entries that
// saves the hour of embedding when only what follows is compared. Such a
// run reports no import or embedding figures.
func (s *scaleRun) repo(src string, n int, name string, embed bool) string {
	b := s.b
	var kept string
	if root := os.Getenv("BENCH_FIXTURE"); root != "" {
		kept = filepath.Join(root, fmt.Sprintf("%s-%s-%d-%t", filepath.Base(strings.TrimSuffix(src, "/")), name, n, embed))
		if _, err := os.Stat(filepath.Join(kept, ".git")); err == nil {
			dir := filepath.Join(b.TempDir(), "repo")
			if out, err := exec.Command("cp", "-a", kept, dir).CombinedOutput(); err != nil {
				b.Fatalf("copy the fixture %s: %v\n%s", kept, err, out)
			}
			fmt.Fprintf(os.Stderr, "scale: %s: the fixture in %s, built by an earlier run\n", name, kept)
			if s.corpus == nil {
				s.corpus = corpusOf(b, dir)
			}
			return dir
		}
	}
	dir := s.fresh(src, n, name, embed)
	if kept != "" {
		if err := os.MkdirAll(filepath.Dir(kept), 0o755); err != nil {
			b.Fatal(err)
		}
		if out, err := exec.Command("cp", "-a", dir, kept+".tmp").CombinedOutput(); err != nil {
			b.Fatalf("keep the fixture in %s: %v\n%s", kept, err, out)
		}
		if err := os.Rename(kept+".tmp", kept); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// fresh builds repo's repository from nothing.
func (s *scaleRun) fresh(src string, n int, name string, embed bool) string {
	b := s.b
	dir := cloneReal(b, src)
	testrepo.Git(b, dir, "checkout-index", "--all", "--force")
	if s.corpus == nil {
		s.corpus = corpusOf(b, dir)
	}
	s.build(dir, "init")
	s.build(dir, "index")
	rng := rand.New(rand.NewSource(int64(n)))
	f := filepath.Join(b.TempDir(), "batch.jsonl")
	start := time.Now()
	const batch = 10_000
	for done := 0; done < n; done += batch {
		var buf bytes.Buffer
		s.corpus.entries(&buf, rng, done, min(batch, n-done))
		if err := os.WriteFile(f, buf.Bytes(), 0o600); err != nil {
			b.Fatal(err)
		}
		s.build(dir, "import", f)
		if done%100_000 == 0 {
			fmt.Fprintf(os.Stderr, "scale: %s: %d of %d entries imported in %s\n", name, done+batch, n, time.Since(start).Round(time.Second))
		}
	}
	s.report(float64(n)/time.Since(start).Seconds(), "entries/s-import-"+name)
	if !embed {
		return dir
	}
	_, d := s.build(dir, "embed")
	s.report(float64(n)/d.Seconds(), "entries/s-embed-"+name)
	return dir
}

// sizes reports the repository's objects and the cache on disk.
func (s *scaleRun) sizes(dir string) {
	s.report(float64(duBytes(s.b, filepath.Join(dir, ".git", "objects")))/(1<<20), "MiB-objects")
	s.report(float64(duBytes(s.b, filepath.Join(dir, ".git", "synaptic")))/(1<<20), "MiB-cache")
}

func duBytes(b *testing.B, path string) int64 {
	var total int64
	err := filepath.Walk(path, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return total
}

// timeOnce runs a command (git or the binary) once in dir and reports its
// time in seconds.
func (s *scaleRun) timeOnce(dir, unit, name string, args ...string) {
	start := time.Now()
	if name == "git" {
		testrepo.Git(s.b, dir, args...)
	} else {
		s.run(dir, append([]string{name}, args...)...)
	}
	s.report(time.Since(start).Seconds(), unit)
}

// saves times CLI saves, then saves through a running MCP server, each
// as searches are timed: the first on its own, the others after
// thinkTime. From the command line, the first starts the warm process
// (and runs in place) and the second is that process's first in the
// repository, which it opens (its lexicon read then took the other core
// from the saves after it): both are reported on their own.
func (s *scaleRun) saves(dir string) {
	rng := rand.New(rand.NewSource(7))
	_, d := s.run(dir, "save", s.corpus.note(rng), "--type", "insight")
	s.report(ms(d), "ms/save-cli-first")
	waitDaemonB(s.b, dir, s.warm)
	_, d = s.run(dir, "save", s.corpus.note(rng), "--type", "insight")
	s.report(ms(d), "ms/save-cli-warm-first")
	time.Sleep(thinkTime)
	var cli []time.Duration
	for range 30 {
		_, d := s.run(dir, "save", s.corpus.note(rng), "--type", "insight")
		cli = append(cli, d)
	}
	s.report(ms(median(cli)), "ms/save-cli-median")
	srv := startMCP(s.b, dir, s.warm)
	defer srv.close()
	first := srv.call("tools/call", map[string]any{"name": "context_save",
		"arguments": map[string]any{"content": s.corpus.note(rng), "type": "insight"}})
	s.report(ms(first), "ms/save-mcp-first")
	time.Sleep(thinkTime)
	var viaMCP []time.Duration
	for range 30 {
		viaMCP = append(viaMCP, srv.call("tools/call", map[string]any{"name": "context_save",
			"arguments": map[string]any{"content": s.corpus.note(rng), "type": "insight"}}))
	}
	s.report(ms(median(viaMCP)), "ms/save-mcp-median")
}

// mcp times warm hybrid and BM25 searches through one MCP server,
// interleaved, and reports the server's peak RSS after them.
func (s *scaleRun) mcp(dir string) {
	srv := startMCP(s.b, dir, s.warm)
	defer srv.close()
	start := time.Now()
	srv.call("tools/call", search("warm up"))
	s.report(time.Since(start).Seconds(), "s/mcp-first-search")
	time.Sleep(thinkTime)
	var hybrid, bm25 []time.Duration
	for i := range 60 {
		q := s.corpus.queries[i%len(s.corpus.queries)]
		hybrid = append(hybrid, srv.call("tools/call", search(q)))
		bm25 = append(bm25, srv.call("tools/call", search(q, "mode", "bm25")))
	}
	s.report(ms(median(hybrid)), "ms/mcp-search-median")
	s.report(ms(median(bm25)), "ms/mcp-bm25-median")
	peak, anon, file := srv.memory()
	s.report(float64(peak)/(1<<20), "MiB-mcp-peak-rss")
	s.report(float64(anon)/(1<<20), "MiB-mcp-rss-anon")
	s.report(float64(file)/(1<<20), "MiB-mcp-rss-file")
}

// vectorRecall compares, in process, the vector stage a search runs
// (sign bits, then the float vectors of the nearest) over memory entries
// with exact search over every vector: recall@10, averaged over the
// corpus's queries. The stage measured is a long-lived process's (the MCP
// server's, the warm process's), which reads a large memory's rows in
// clusters and only the nearest of them; a command run without the warm
// process scans every row, and its recall is reported beside it.
func (s *scaleRun) vectorRecall(dir string) {
	b := s.b
	ctx := context.Background()
	m, err := embed.Find(embed.DefaultModel)
	if err != nil {
		b.Fatal(err)
	}
	model, err := embed.Load(m, embed.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer model.Close()
	// ten queries: the exact reference reads every vector (half a minute
	// each at a million entries)
	vecs, err := model.Embed(ctx, s.corpus.queries[:10])
	if err != nil {
		b.Fatal(err)
	}
	open := func(hold bool) *cache.Cache {
		c, _, err := cache.Open(filepath.Join(dir, ".git", "synaptic", "cache.db"), 5*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		if ok, err := c.UseStoredModel(ctx); err != nil || !ok {
			b.Fatalf("no stored model in the cache: %v", err)
		}
		if hold { // as a long-lived process's cache: its rows laid out
			c.HoldVectors(64 << 20)
			if err := c.LoadIndex(ctx); err != nil {
				b.Fatal(err)
			}
		}
		return c
	}
	c, held := open(false), open(true)
	defer c.Close()
	defer held.Close()
	recall := func(exact, got []cache.Hit) float64 {
		got = got[:min(10, len(got))]
		found := map[string]bool{}
		for _, h := range got {
			found[h.ID] = true
		}
		hit := 0
		for _, h := range exact {
			if found[h.ID] {
				hit++
			}
		}
		return float64(hit) / float64(max(1, len(exact)))
	}
	f := cache.Filter{Types: append(append([]memory.Type{}, memory.SavableTypes...), memory.TypeNote)}
	var inProcess, inCommand float64
	var took []time.Duration
	for _, q := range vecs {
		exact, err := c.NearestExact(ctx, q, f, 10)
		if err != nil {
			b.Fatal(err)
		}
		// a search for 10 asks its memory lane for 20 (cache.lanes)
		start := time.Now()
		got, err := held.Nearest(ctx, q, f, 20)
		if err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		inProcess += recall(exact, got)
		if got, err = c.Nearest(ctx, q, f, 20); err != nil {
			b.Fatal(err)
		}
		inCommand += recall(exact, got)
	}
	s.report(inProcess/float64(len(vecs)), "recall@10-vector-stage")
	s.report(inCommand/float64(len(vecs)), "recall@10-vector-stage-command")
	s.report(ms(median(took[1:])), "ms/vector-stage-median") // the first reads the vectors' pages
}

// pages times the first page of list and log.
func (s *scaleRun) pages(dir string) {
	var list, log []time.Duration
	for range 15 {
		_, d := s.run(dir, "list", "-n", "20")
		list = append(list, d)
		_, d = s.run(dir, "log", "--oneline", "-n", "20", "--no-pager")
		log = append(log, d)
	}
	s.report(ms(median(list)), "ms/list-median")
	s.report(ms(median(log)), "ms/log-median")
}

// hooks times the session-start and prompt hooks, warm, in the big
// repository and in the same repository at 10k entries, interleaved.
func (s *scaleRun) hooks(ref, big string) {
	defer runEnvB(s.b, ref, s.warm, "", "daemon", "stop")
	prompt := "why does " + s.corpus.queries[0] + "?"
	repos := map[string]string{"10k": ref, "big": big}
	times := map[string][]time.Duration{}
	for i := range 16 {
		in, _ := json.Marshal(map[string]string{"session_id": fmt.Sprintf("scale-%d", i), "prompt": prompt})
		for _, name := range []string{"10k", "big"} {
			for _, hook := range []string{"session-start", "prompt"} {
				_, d := runEnvB(s.b, repos[name], s.warm, string(in), "hook", hook)
				if i > 0 { // the first starts the warm process
					times[hook+"-"+name] = append(times[hook+"-"+name], d)
				} else if hook == "prompt" && name == "big" {
					s.report(ms(d), "ms/prompt-first-big")
				}
			}
		}
		if i == 0 {
			time.Sleep(thinkTime)
		}
	}
	for _, hook := range []string{"session-start", "prompt"} {
		big, small := median(times[hook+"-big"]), median(times[hook+"-10k"])
		s.report(ms(small), "ms/"+hook+"-10k")
		s.report(ms(big), "ms/"+hook+"-big")
		s.report(float64(big)/float64(small), "x-10k/"+hook)
	}
}

// reindex rebuilds the cache from the refs, in process, and reports its
// time and the CLI's peak RSS doing it.
func (s *scaleRun) reindex(dir string) {
	start := time.Now()
	rss := runRSS(s.b, dir, []string{"GIT_SYNAPTIC_DAEMON=off"}, "reindex")
	s.report(time.Since(start).Seconds(), "s/reindex")
	s.report(float64(rss)/(1<<20), "MiB-cli-reindex-peak-rss")
	rss = runRSS(s.b, dir, []string{"GIT_SYNAPTIC_DAEMON=off"}, "search", s.corpus.queries[1])
	s.report(float64(rss)/(1<<20), "MiB-cli-search-peak-rss")
}

// share pushes the repository to a new bare remote (git push, whose
// pre-push hook carries the memory, in the background past its wait),
// clones it afresh over git's transport and runs the clone's first
// command, then syncs 10k entries a teammate saved into that clone; it
// fails when the memory did not get where it was going.
func (s *scaleRun) share(dir string) {
	b := s.b
	remote := filepath.Join(b.TempDir(), "remote.git")
	testrepo.Git(b, "", "init", "-q", "--bare", "--initial-branch=main", remote)
	testrepo.Git(b, dir, "remote", "set-url", "origin", "file://"+remote)
	start := time.Now()
	s.timeOnce(dir, "s/first-git-push", "git", "push", "-q", "origin", "HEAD:refs/heads/main")
	// the hook's memory push goes on in the background past
	// synaptic.prePushWait: the time until the remote holds the memory
	s.waitFor(remote, tip(b, dir), 15*time.Minute)
	s.report(time.Since(start).Seconds(), "s/memory-on-remote-after-git-push")
	s.timeOnce(dir, "s/sync-after-push", "sync")
	clone := filepath.Join(b.TempDir(), "clone")
	start = time.Now()
	testrepo.Git(b, "", "clone", "-q", "--no-checkout", "file://"+remote, clone)
	s.report(time.Since(start).Seconds(), "s/git-clone")
	off := []string{"GIT_SYNAPTIC_DAEMON=off"}
	start = time.Now()
	runEnvB(b, clone, off, "", "init")
	runEnvB(b, clone, off, "", "list", "-n", "1")
	s.report(time.Since(start).Seconds(), "s/clone-init-first-command")
	// a figure of a clone without its memory measures nothing (the 1M
	// run at a72ce8a did: init had given up fetching)
	if got, want := tip(b, clone), tip(b, dir); got != want {
		b.Fatalf("the clone's memory after init is at %q, the remote's at %q", got, want)
	}
	rng := rand.New(rand.NewSource(11))
	var buf bytes.Buffer
	s.corpus.entries(&buf, rng, 0, scale(10_000))
	f := filepath.Join(b.TempDir(), "teammate.jsonl")
	if err := os.WriteFile(f, buf.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	s.build(dir, "import", f)
	s.build(dir, "sync")
	start = time.Now()
	runEnvB(b, clone, off, "", "sync")
	s.report(time.Since(start).Seconds(), "s/sync-10k")
	if got, want := tip(b, clone), tip(b, dir); got != want {
		b.Fatalf("the clone's memory after its sync is at %q, the teammate's at %q", got, want)
	}
}

// tip is the memory ref's commit in the repository at dir ("" without).
func tip(b *testing.B, dir string) string {
	out, _ := exec.Command("git", "-C", dir, "rev-parse", "-q", "--verify", "refs/synaptic/memory").Output()
	return strings.TrimSpace(string(out))
}

// waitFor waits until the memory ref of the repository at dir is want,
// failing the run after limit.
func (s *scaleRun) waitFor(dir, want string, limit time.Duration) {
	for deadline := time.Now().Add(limit); tip(s.b, dir) != want; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			s.b.Fatalf("%s's memory is at %q after %s, want %q", dir, tip(s.b, dir), limit, want)
		}
	}
}

// runRSS runs the binary and returns its peak resident set in bytes, read
// from /proc while it runs (VmHWM): the rusage that Wait returns counts
// the test process's own resident set, shared with the child until exec.
func runRSS(b *testing.B, dir string, env []string, args ...string) int64 {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peak int64
	for tick := time.NewTicker(5 * time.Millisecond); ; {
		select {
		case err := <-done:
			tick.Stop()
			if err != nil {
				b.Fatalf("git-synaptic %s: %v\n%s", strings.Join(args, " "), err, out.String())
			}
			return peak
		case <-tick.C:
			peak = max(peak, procStatus(cmd.Process.Pid)["VmHWM:"])
		}
	}
}

// procStatus reads the sizes /proc/PID/status gives in kB, in bytes, by
// field name ("VmHWM:", "RssAnon:"); none once the process is gone.
func procStatus(pid int) map[string]int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[2] == "kB" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			out[f[0]] = kb * 1024
		}
	}
	return out
}

// mcpProc is a running MCP server.
type mcpProc struct {
	cmd   *exec.Cmd
	call  func(method string, params any) time.Duration
	close func()
}

func startMCP(b *testing.B, dir string, env []string) *mcpProc {
	p := &mcpProc{}
	p.cmd, p.call, p.close = mcpServerEnv(b, dir, env)
	return p
}

// memory is the server's peak resident set so far (VmHWM) and, now, its
// anonymous memory and the file pages it maps (SQLite's mmap of the
// cache), in bytes.
func (p *mcpProc) memory() (peak, anon, file int64) {
	st := procStatus(p.cmd.Process.Pid)
	return st["VmHWM:"], st["RssAnon:"], st["RssFile:"]
}

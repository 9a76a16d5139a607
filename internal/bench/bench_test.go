// Package bench measures git-synaptic end to end through the real binary:
// CLI save latency and throughput, log and search latency at 10k and 100k
// entries, sync of 10k entries between two clones, and a full cache
// rebuild of 100k entries. Run with `make bench`; BENCH_SCALE=small
// divides the sizes by 10 for a quick look.
//
// Each benchmark runs once (-benchtime 1x) and reports medians of many
// timed CLI calls as custom metrics (ms/call), so figures from one run can
// be compared with the targets in the issues.
package bench

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

var bin string

func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		// go test ./... runs no benchmark here: build nothing
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "synaptic-bench")
	if err != nil {
		panic(err)
	}
	if bin, err = testrepo.BuildBinary("../..", dir); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(2)
	}
	// The installed hooks call git-synaptic from PATH.
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	cleanup := testrepo.Isolate()
	code := m.Run()
	cleanup()
	os.RemoveAll(dir)
	os.Exit(code)
}

func scale(n int) int {
	if os.Getenv("BENCH_SCALE") == "small" {
		return n / 10
	}
	return n
}

func run(b *testing.B, dir string, args ...string) (string, time.Duration) {
	b.Helper()
	return runEnvB(b, dir, nil, "", args...)
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// vocabulary gives generated entries a Zipf-like word distribution, so that
// BM25 sees common and rare terms as in real notes.
var vocabulary = strings.Fields(`the a to of and in is for we that it on with this be as by not are from at
or use should build test cache search index memory git ref commit branch merge rebase sync push fetch
postgres sqlite redis kafka billing auth login session token deploy release ci pipeline flaky timeout
retry backoff worker queue api endpoint handler schema migration vector embedding model latency
throughput benchmark regression bug fix decision insight issue handoff progress rule reference
config flag env docker kubernetes helm terraform aws gcp azure region cluster node pod service
frontend backend react typescript golang python rust compile linker cgo panic error exception
logging metrics tracing alert oncall incident postmortem rollback hotfix feature toggle experiment`)

func sentence(rng *rand.Rand, zipf *rand.Zipf) string {
	n := 8 + rng.Intn(25)
	w := make([]string, n)
	for i := range w {
		w[i] = vocabulary[zipf.Uint64()]
	}
	return strings.Join(w, " ") + fmt.Sprintf(" (note %d)", rng.Intn(1_000_000))
}

// importEntries adds n generated entries to dir's memory in batches
// (one commit per batch, as a busy team's memory would accumulate).
func importEntries(b *testing.B, dir string, n, batch int, seed int64) {
	b.Helper()
	rng := rand.New(rand.NewSource(seed))
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocabulary)-1))
	types := []string{"decision", "insight", "issue", "progress", "reference", "handoff"}
	f := filepath.Join(b.TempDir(), "batch.jsonl")
	for done := 0; done < n; done += batch {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		var started time.Time
		for i := 0; i < batch && done+i < n; i++ {
			// agent sessions of 20 entries, a minute apart
			k := done + i
			if k%20 == 0 {
				started = time.Now().Add(-time.Duration(rng.Intn(90*24)) * time.Hour)
			}
			enc.Encode(map[string]any{"content": sentence(rng, zipf), "type": types[rng.Intn(len(types))], "tags": []string{vocabulary[rng.Intn(len(vocabulary))]},
				"created": started.Add(time.Duration(k%20) * time.Minute), "session_id": fmt.Sprintf("bench-%d-%d", seed, k/20)})
		}
		os.WriteFile(f, buf.Bytes(), 0o644)
		run(b, dir, "import", f)
	}
}

// repoWith returns a repository holding n generated entries, packed as a
// fetched repository would be.
func repoWith(b *testing.B, n int) string {
	b.Helper()
	dir := testrepo.NewRepo(b)
	importEntries(b, dir, n, 5000, 1)
	testrepo.Git(b, dir, "repack", "-adq")
	return dir
}

func BenchmarkSave(b *testing.B) {
	dir := repoWith(b, scale(10000))
	var ds []time.Duration
	start := time.Now()
	const calls = 200
	// distinct notes, as a team writes them: identical ones would each be
	// reported and linked as near-duplicates (about 2.5 ms more a save)
	rng := rand.New(rand.NewSource(3))
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocabulary)-1))
	for i := 0; i < calls; i++ {
		_, d := run(b, dir, "save", sentence(rng, zipf), "--type", "insight", "--tag", "bench")
		ds = append(ds, d)
	}
	b.ReportMetric(ms(median(ds)), "ms/save-median")
	b.ReportMetric(float64(calls)/time.Since(start).Seconds(), "saves/s")
}

func latency(b *testing.B, n int) {
	dir := repoWith(b, n)
	queries := []string{"flaky timeout in ci pipeline", "postgres migration rollback", "why did we choose redis", "embedding model latency", "kubernetes helm deploy", "auth token session login bug"}
	run(b, dir, "log", "-n", "1") // warm the cache once; later calls are steady state
	// embed everything first (the throughput figure), so searches measure
	// steady state: a cold CLI process that loads the model and searches
	_, d := run(b, dir, "embed")
	b.ReportMetric(float64(n)/d.Seconds(), "entries/s-embed")
	var searchD, bm25D, logD, listD []time.Duration
	for i := 0; i < 60; i++ {
		_, d := run(b, dir, "search", queries[i%len(queries)], "-n", "10")
		searchD = append(searchD, d)
		_, d = run(b, dir, "search", queries[i%len(queries)], "-n", "10", "--mode", "bm25")
		bm25D = append(bm25D, d)
	}
	b.ReportMetric(ms(median(bm25D)), "ms/search-bm25-median")
	for i := 0; i < 30; i++ {
		_, d := run(b, dir, "log", "--oneline", "-n", "20", "--no-pager")
		logD = append(logD, d)
		_, d = run(b, dir, "list", "--type", "decision", "-n", "20")
		listD = append(listD, d)
	}
	b.ReportMetric(ms(median(searchD)), "ms/search-hybrid-median")
	// Recall II's target: a cold hybrid search within 4 × a cold BM25 one,
	// measured interleaved in the same run
	b.ReportMetric(float64(median(searchD))/float64(median(bm25D)), "x-cold-hybrid/bm25")
	b.ReportMetric(ms(median(logD)), "ms/log-median")
	b.ReportMetric(ms(median(listD)), "ms/list-median")
}

func BenchmarkLatency10k(b *testing.B)  { latency(b, scale(10000)) }
func BenchmarkLatency100k(b *testing.B) { latency(b, scale(100000)) }

func BenchmarkRebuild100k(b *testing.B) {
	dir := repoWith(b, scale(100000))
	var ds []time.Duration
	for i := 0; i < 3; i++ {
		_, d := run(b, dir, "reindex")
		ds = append(ds, d)
	}
	b.ReportMetric(median(ds).Seconds(), "s/rebuild-median")
}

func BenchmarkSync10k(b *testing.B) {
	clones, _ := testrepo.NewReposAndRemote(b, 2)
	a, c := clones[0], clones[1]
	importEntries(b, a, scale(1000), scale(1000), 2)
	run(b, a, "sync")
	run(b, c, "sync")
	// a teammate saves 10k entries (100 commits of 100) and syncs them up;
	// c then syncs: fetch, merge, push nothing, index 10k new entries.
	importEntries(b, a, scale(10000), 100, 3)
	run(b, a, "sync")
	_, d := run(b, c, "sync")
	out, _ := run(b, c, "status", "--json")
	var st struct {
		Counts struct{ Total int } `json:"counts"`
	}
	json.Unmarshal([]byte(out), &st)
	if st.Counts.Total != scale(11000) {
		b.Fatalf("after sync: %d entries, want %d", st.Counts.Total, scale(11000))
	}
	b.ReportMetric(d.Seconds(), "s/sync-10k")
}

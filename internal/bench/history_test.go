package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/evaldata"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// hugoLog is the recorded hugo history in the shared evaluation data.
const hugoLog = "../../../shared/eval/cochange/hugo.nameonly.log.gz"

func hugoRepo(b *testing.B, limit int) string {
	b.Helper()
	if _, err := os.Stat(hugoLog); err != nil {
		b.Fatalf("hugo history not found at %s (../shared must sit beside the repository): %v", hugoLog, err)
	}
	commits, err := evaldata.ReadNameOnlyLog(hugoLog, limit)
	if err != nil {
		b.Fatal(err)
	}
	dir := testrepo.NewRepo(b)
	testrepo.Replay(b, dir, commits)
	testrepo.Git(b, dir, "repack", "-adq")
	return dir
}

func timeCmd(b *testing.B, dir string, name string, args ...string) time.Duration {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return time.Since(start)
}

// BenchmarkIndexHugo indexes the full replayed hugo history and compares it
// with `git log --name-only` over the same repository, in one run; then
// times an incremental re-index with nothing new.
func BenchmarkIndexHugo(b *testing.B) {
	dir := hugoRepo(b, 0)
	var logD, idxD, incD []time.Duration
	for i := 0; i < 3; i++ {
		logD = append(logD, timeCmd(b, dir, "git", "log", "--name-only", "--format=%H %an %at %s"))
		os.RemoveAll(filepath.Join(dir, ".git", "synaptic"))
		idxD = append(idxD, timeCmd(b, dir, bin, "index"))
	}
	for i := 0; i < 20; i++ {
		incD = append(incD, timeCmd(b, dir, bin, "index"))
	}
	b.ReportMetric(median(logD).Seconds(), "s/git-log-name-only")
	b.ReportMetric(median(idxD).Seconds(), "s/index-full")
	b.ReportMetric(float64(median(idxD))/float64(median(logD)), "ratio-index/git-log")
	b.ReportMetric(ms(median(incD)), "ms/index-incremental")
}

// BenchmarkPostCommitHook measures what the post-commit hook adds to
// `git commit` on a repository with 10k indexed commits: the median of
// commits with the hooks installed minus the median without.
func BenchmarkPostCommitHook(b *testing.B) {
	dir := hugoRepo(b, scale(10000))
	run(b, dir, "index")
	commitTimes := func(n int, tag string) []time.Duration {
		var ds []time.Duration
		for i := 0; i < n; i++ {
			os.WriteFile(filepath.Join(dir, "bench.txt"), []byte(fmt.Sprintf("%s %d\n", tag, i)), 0o644)
			testrepo.Git(b, dir, "add", "bench.txt")
			ds = append(ds, timeCmd(b, dir, "git", "commit", "-q", "-m", tag))
		}
		return ds
	}
	commitTimes(5, "warm")
	var without, with []time.Duration
	run(b, dir, "hooks", "install")
	for round := 0; round < 5; round++ { // interleave to spread machine noise
		run(b, dir, "hooks", "uninstall")
		without = append(without, commitTimes(8, "plain")...)
		run(b, dir, "hooks", "install")
		with = append(with, commitTimes(8, "hooked")...)
	}
	out, _ := run(b, dir, "search", "--type", "git_commit", "hooked", "-n", "1", "--json")
	if len(out) < 10 {
		b.Fatalf("hooked commits were not indexed: %s", out)
	}
	b.ReportMetric(ms(median(without)), "ms/commit-without-hook")
	b.ReportMetric(ms(median(with)), "ms/commit-with-hook")
	b.ReportMetric(ms(median(with)-median(without)), "ms/hook-overhead")
}

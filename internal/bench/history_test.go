package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// BenchmarkIndexHugoReplay indexes the full replayed hugo history (tiny
// files: the real-repository figures are BenchmarkRealIndex's) and compares it
// with `git log --name-only` over the same repository, in one run; then
// times an incremental re-index with nothing new.
func BenchmarkIndexHugoReplay(b *testing.B) {
	benchIndex(b, hugoRepo(b, 0), 3)
}

// benchIndex times runs full indexes of dir into a fresh cache against
// `git log --no-renames --name-only` (names only, never file contents) and
// plain `git log --name-only` (git's default rename detection, which reads
// the contents of deleted and added files, as index does), interleaved;
// then 20 indexes with nothing new. Where plain git log cannot run (blobs
// missing) its figures are left out, and said so.
func benchIndex(b *testing.B, dir string, runs int) {
	var logD, renD, idxD, incD []time.Duration
	renames := true
	for i := 0; i < runs; i++ {
		logD = append(logD, timeCmd(b, dir, "git", "log", "--no-renames", "--name-only", "--format=%H %an %at %s"))
		if renames {
			cmd := exec.Command("git", "log", "--name-only", "--format=%H %an %at %s")
			cmd.Dir = dir
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Logf("plain git log --name-only fails here, so no ratio against it: %v: %s", err, lastLine(out))
				renames = false
			}
			renD = append(renD, time.Since(start))
		}
		os.RemoveAll(filepath.Join(dir, ".git", "synaptic"))
		idxD = append(idxD, timeCmd(b, dir, bin, "index"))
	}
	for i := 0; i < 20; i++ {
		incD = append(incD, timeCmd(b, dir, bin, "index"))
	}
	b.ReportMetric(median(logD).Seconds(), "s/git-log-name-only")
	b.ReportMetric(median(idxD).Seconds(), "s/index-full")
	b.ReportMetric(float64(median(idxD))/float64(median(logD)), "ratio-index/git-log")
	if renames {
		b.ReportMetric(float64(median(idxD))/float64(median(renD)), "ratio-index/git-log-renames")
	}
	b.ReportMetric(ms(median(incD)), "ms/index-up-to-date")
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// realRepos are the real repositories the history benchmarks run on:
// BENCH_REPOS, comma-separated paths or URLs of git repositories (each is
// cloned into a temporary directory first), or by default tmux's public
// repository (12k commits, full contents). Clones without a worktree
// (git clone --no-checkout) and with missing blobs (gohugoio/hugo's copy in
// this project's machines) work too.
func realRepos(b *testing.B) []string {
	b.Helper()
	list := os.Getenv("BENCH_REPOS")
	if list == "" {
		list = "https://github.com/tmux/tmux"
	}
	return strings.Split(list, ",")
}

// cloneReal clones src into a temporary directory without checking out
// files (a big worktree is not what is measured) but with git's index
// filled, so that commits add to HEAD's tree.
func cloneReal(b *testing.B, src string) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "repo")
	cmd := exec.Command("git", "clone", "-q", "--no-checkout", src, dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("clone %s: %v\n%s\nPoint BENCH_REPOS at local clones of real repositories, e.g. BENCH_REPOS=$HOME/src/tmux,$HOME/src/hugo", src, err, out)
	}
	testrepo.Git(b, dir, "read-tree", "HEAD")
	return dir
}

// forEachReal runs f on a fresh clone of each real repository, named by
// its last path element.
func forEachReal(b *testing.B, f func(b *testing.B, dir string)) {
	for _, src := range realRepos(b) {
		b.Run(filepath.Base(strings.TrimSuffix(src, "/")), func(b *testing.B) {
			dir := cloneReal(b, src)
			b.ReportMetric(float64(len(strings.Fields(testrepo.Git(b, dir, "rev-list", "HEAD")))), "commits")
			f(b, dir)
		})
	}
}

// BenchmarkRealIndex indexes a real repository's full history into a
// fresh cache and compares it with `git log --name-only`, with and without
// rename detection, in the same run, interleaved (see benchIndex); then
// an index with nothing new.
func BenchmarkRealIndex(b *testing.B) {
	forEachReal(b, func(b *testing.B, dir string) { benchIndex(b, dir, 5) })
}

// BenchmarkRealCommit measures what git-synaptic adds to `git commit` on a
// real repository after `init` (its hooks installed, history indexed): the
// median of commits with the hooks minus the median without, interleaved.
// The hooks hand the new commit to the warm process, detached; ms/catch-up
// is a `list` right after a commit minus a `list` with nothing new (what
// is left for the next command when the daemon has not indexed it yet;
// list rather than search, whose embedding and ranking work varies from
// call to call).
func BenchmarkRealCommit(b *testing.B) {
	forEachReal(b, func(b *testing.B, dir string) {
		// as a user has it: the warm process on, which the hooks hand
		// their commits to
		b.Setenv("GIT_SYNAPTIC_DAEMON", "on")
		b.Setenv("XDG_RUNTIME_DIR", b.TempDir())
		defer run(b, dir, "daemon", "stop")
		run(b, dir, "init")
		run(b, dir, "index")
		run(b, dir, "search", "start the daemon")
		i := 0
		commit := func(tag string) time.Duration {
			i++
			os.WriteFile(filepath.Join(dir, "bench.txt"), []byte(fmt.Sprintf("%s %d\n", tag, i)), 0o644)
			testrepo.Git(b, dir, "add", "bench.txt")
			return timeCmd(b, dir, "git", "commit", "-q", "-m", fmt.Sprintf("%s commit %d", tag, i))
		}
		for j := 0; j < 5; j++ {
			commit("warm")
		}
		var without, with, fresh, idle []time.Duration
		for round := 0; round < 6; round++ {
			run(b, dir, "hooks", "uninstall")
			for j := 0; j < 5; j++ {
				without = append(without, commit("plain"))
			}
			run(b, dir, "hooks", "install")
			for j := 0; j < 5; j++ {
				with = append(with, commit("hooked"))
				fresh = append(fresh, timeCmd(b, dir, bin, "list", "-n", "1"))
				idle = append(idle, timeCmd(b, dir, bin, "list", "-n", "1"))
			}
		}
		out, _ := run(b, dir, "search", "--type", "git_commit", fmt.Sprintf("hooked commit %d", i), "-n", "100", "--json")
		if !strings.Contains(out, testrepo.Git(b, dir, "rev-parse", "HEAD")) {
			b.Fatalf("the last commit was not indexed: %s", out)
		}
		b.ReportMetric(ms(median(without)), "ms/commit-without-hooks")
		b.ReportMetric(ms(median(with)), "ms/commit-with-hooks")
		b.ReportMetric(ms(median(with)-median(without)), "ms/hook-overhead")
		b.ReportMetric(ms(median(fresh)-median(idle)), "ms/catch-up")
	})
}

// BenchmarkRealCochanges times `cochanges` and `suggest` on a real
// repository's indexed history: the first call after indexing (it builds
// the model snapshot) and the median of later calls.
func BenchmarkRealCochanges(b *testing.B) {
	forEachReal(b, func(b *testing.B, dir string) {
		run(b, dir, "index")
		// The most changed file of the last 500 commits, and its partner.
		files := strings.Fields(testrepo.Git(b, dir, "log", "-500", "--no-renames", "--name-only", "--format="))
		counts := map[string]int{}
		top := ""
		for _, f := range files {
			counts[f]++
			if counts[f] > counts[top] {
				top = f
			}
		}
		_, first := run(b, dir, "cochanges", top)
		out, _ := run(b, dir, "cochanges", top, "-n", "1", "--json")
		var cc struct{ Cochanges []struct{ File string } }
		json.Unmarshal([]byte(out), &cc)
		if len(cc.Cochanges) == 0 {
			b.Fatalf("no co-changes for %s: %s", top, out)
		}
		var co, su []time.Duration
		for i := 0; i < 21; i++ {
			co = append(co, timeCmd(b, dir, bin, "cochanges", top))
			su = append(su, timeCmd(b, dir, bin, "suggest", "--files", top+","+cc.Cochanges[0].File))
		}
		b.ReportMetric(ms(first), "ms/cochanges-first")
		b.ReportMetric(ms(median(co)), "ms/cochanges")
		b.ReportMetric(ms(median(su)), "ms/suggest")
	})
}

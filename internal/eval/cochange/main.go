// Command cochange evaluates the co-change recommenders on a real history
// (`make eval-cochange`). Input: `git log --no-renames --name-only
// --format=--%H--%ct--%an` output, or the same with --name-status -M, whose
// renames and deletions are replayed as the product follows them,
// optionally gzipped (the hugo history in ../shared/eval/cochange, and
// testdata/hugo.namestatus.log.gz with renames). With -repo and -write it
// writes such a log of a repository's history instead, read as the
// product's index reads it (renames found by git, exact ones only where
// contents are missing). Protocol: learn commits before -split; test on
// later commits touching 2-20 files. Metrics are means over queries and,
// in the last two columns, means over commits of the per-query means (each
// commit counts once: the averaging that gives plain pair counts the
// issue's baselines, rolling navigation MRR@10 0.59). Navigation: for each
// file of a test commit, query that file and score the commit's other
// files. Prevention: for each file, query the commit's other files and
// score the missing one. Frozen mode learns nothing after the split;
// rolling mode learns each test commit after scoring it, as the post-commit
// hook does.
package main

import (
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/git-synaptic/git-synaptic/cochange"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/evaldata"
)

func main() {
	logPath := flag.String("log", "../shared/eval/cochange/hugo.nameonly.log.gz", "history as git log --name-only --format=--%H--%ct--%an (gzip ok)")
	split := flag.String("split", "2025-01-01", "learn commits before this date, test on later ones")
	until := flag.String("until", "", "test only on commits before this date (tuning on a validation year)")
	minFiles := flag.Int("min", 2, "smallest test commit")
	maxFiles := flag.Int("max", 20, "largest test commit")
	halfLife := flag.Duration("half-life", 0, "Weighted: recency half-life (0: default)")
	sizeExp := flag.Float64("size-exp", 0, "Weighted: size exponent (0: default)")
	sameDir := flag.Float64("same-dir", 0, "Weighted: same-directory factor (0: default, <0: off)")
	maxLearn := flag.Int("max-files", 0, "largest commit learned for pairs (0: default)")
	only := flag.String("only", "", "evaluate only this method (or tuned: weighted with self-tuned options)")
	holdout := flag.Int("tune-holdout", 300, "self-tuning: validate on this many of the last training commits")
	repo := flag.String("repo", "", "with -write: the repository whose history to write as a log")
	write := flag.String("write", "", "write -repo's history as a --name-status log to this file (.gz: gzipped) and exit")
	flag.Parse()
	if *repo != "" || *write != "" {
		if err := writeLog(*repo, *write); err != nil {
			fmt.Fprintln(os.Stderr, "eval-cochange:", err)
			os.Exit(1)
		}
		return
	}
	commits, err := readLog(*logPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "eval-cochange:", err)
		os.Exit(1)
	}
	at, err := time.Parse("2006-01-02", *split)
	if err != nil {
		fmt.Fprintln(os.Stderr, "eval-cochange: -split:", err)
		os.Exit(2)
	}
	end := time.Now().AddDate(100, 0, 0)
	if *until != "" {
		if end, err = time.Parse("2006-01-02", *until); err != nil {
			fmt.Fprintln(os.Stderr, "eval-cochange: -until:", err)
			os.Exit(2)
		}
	}
	train, test := splitAt(commits, at, end)
	nTest := 0
	for _, c := range test {
		if len(c.Files) >= *minFiles && len(c.Files) <= *maxFiles {
			nTest++
		}
	}
	fmt.Printf("history %s: %d commits with files; train %d (< %s), test %d (%d with %d-%d files)\n\n",
		*logPath, len(commits), len(train), *split, len(test), nTest, *minFiles, *maxFiles)
	opt := cochange.Options{HalfLife: *halfLife, SizeExp: *sizeExp, SameDir: *sameDir, MaxFiles: *maxLearn}
	// Self-tuning as the product does it, on the training commits only:
	// nothing after the split is seen.
	tuned := cochange.Tune(train, *holdout)
	printTuning(tuned)
	printTable(train, test, opt, tuned.Chosen, *only, *minFiles, *maxFiles)
}

// splitAt splits commits (oldest first) into those before at and those
// from at until end.
func splitAt(commits []cochange.Commit, at, end time.Time) (train, test []cochange.Commit) {
	for _, c := range commits {
		if !c.Time.Before(end) {
			break
		}
		if c.Time.Before(at) {
			train = append(train, c)
		} else {
			test = append(test, c)
		}
	}
	return train, test
}

func printTuning(tuned cochange.Tuning) {
	fmt.Printf("self-tuning on the last %d training commits with 2-20 files (MRR@10 / hit@3 per commit, rolling navigation):\n", tuned.Validation)
	for _, sc := range tuned.Scores {
		mark := " "
		if sc.Options == tuned.Chosen {
			mark = "*"
		}
		fmt.Printf("  %s %.3f / %.3f  %s\n", mark, sc.MRR, sc.Hit3, sc.Options)
	}
	fmt.Println()
}

// printTable evaluates every method (or only one) in both modes and both
// tasks; "tuned" is Weighted under the self-tuned options.
func printTable(train, test []cochange.Commit, opt, tuned cochange.Options, only string, minFiles, maxFiles int) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "mode\ttask\tmethod\tqueries\tanswered\tP@1\tP@3\tP@10\tR@3\tR@10\thit@3\tMRR@10\t\tper commit: hit@3\tMRR@10\t")
	for _, rolling := range []bool{false, true} {
		for _, task := range []string{"navigation", "prevention"} {
			for _, m := range append(cochange.Methods, "tuned") {
				if only != "" && string(m) != only {
					continue
				}
				name, o := m, opt
				if m == "tuned" {
					m, o = cochange.Weighted, tuned
				}
				s := evaluate(train, test, m, task, rolling, minFiles, maxFiles, o)
				mode := "frozen"
				if rolling {
					mode = "rolling"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\t%.3f\t%.3f\t\n", mode, task, name, s.n, s.answered/s.nf(),
					s.p1/s.nf(), s.p3/s.nf(), s.p10/s.nf(), s.r3/s.nf(), s.r10/s.nf(), s.hit3/s.nf(), s.mrr/s.nf(),
					s.cHit3/float64(max(s.commits, 1)), s.cMRR/float64(max(s.commits, 1)))
			}
		}
	}
	w.Flush()
}

// scores sums the metrics over queries (the first columns) and, as
// per-query means, over commits (cHit3, cMRR: every commit counts once,
// whatever its size).
type scores struct {
	n, commits                                int
	answered, p1, p3, p10, r3, r10, hit3, mrr float64
	cHit3, cMRR                               float64
}

func (s scores) nf() float64 { return float64(max(s.n, 1)) }

func evaluate(train, test []cochange.Commit, m cochange.Method, task string, rolling bool, minF, maxF int, opt cochange.Options) scores {
	model := cochange.New(opt)
	for _, c := range train {
		model.Learn(c)
	}
	var s scores
	for _, c := range test {
		if len(c.Files) >= minF && len(c.Files) <= maxF {
			hit3, mrr := s.hit3, s.mrr
			for i, f := range c.Files {
				others := append(append([]string(nil), c.Files[:i]...), c.Files[i+1:]...)
				query, want := []string{f}, others
				if task == "prevention" {
					query, want = others, []string{f}
				}
				s.add(model.Suggest(query, m, 10), want)
			}
			s.commits++
			s.cHit3 += (s.hit3 - hit3) / float64(len(c.Files))
			s.cMRR += (s.mrr - mrr) / float64(len(c.Files))
		}
		if rolling {
			model.Learn(c)
		}
	}
	return s
}

func (s *scores) add(got []cochange.Suggestion, want []string) {
	s.n++
	if len(got) > 0 {
		s.answered++
	}
	rel := map[string]bool{}
	for _, f := range want {
		rel[f] = true
	}
	hits := 0
	for i, g := range got {
		if !rel[g.File] {
			continue
		}
		if hits == 0 {
			s.mrr += 1 / float64(i+1)
			if i < 3 {
				s.hit3++
			}
		}
		hits++
		if i < 1 {
			s.p1++
		}
		if i < 3 {
			s.p3 += 1.0 / 3
			s.r3 += 1 / float64(len(want))
		}
		s.p10 += 0.1
		s.r10 += 1 / float64(len(want))
	}
}

// readLog reads the recorded history as co-change commits, oldest first.
func readLog(path string) ([]cochange.Commit, error) {
	log, err := evaldata.ReadNameOnlyLog(path, 0)
	if err != nil {
		return nil, err
	}
	out := make([]cochange.Commit, len(log))
	for i, c := range log {
		out[i] = cochange.Commit{ID: c.ID, Time: time.Unix(c.Time, 0).UTC(), Files: c.Files, Gone: c.Deleted}
		for _, r := range c.Renames {
			out[i].Renames = append(out[i].Renames, cochange.Rename{From: r.From, To: r.To})
		}
	}
	return out, nil
}

// writeLog writes repo's history from HEAD, as the index reads it, to path.
func writeLog(repo, path string) error {
	if repo == "" || path == "" {
		return fmt.Errorf("-repo and -write go together")
	}
	r, err := gitstore.Open(repo)
	if err != nil {
		return err
	}
	var commits []evaldata.Commit
	exact, err := r.History(context.Background(), gitstore.LogOptions{}, func(gc gitstore.Commit) error {
		c := evaldata.Commit{ID: gc.SHA, Time: gc.Time.Unix(), Author: strings.SplitN(gc.Author, " <", 2)[0]}
		for _, f := range gc.Files {
			c.Files = append(c.Files, f.Path)
			if f.OldPath != "" {
				c.Renames = append(c.Renames, evaldata.Rename{From: f.OldPath, To: f.Path})
			}
			if f.Deleted {
				c.Deleted = append(c.Deleted, f.Path)
			}
		}
		commits = append(commits, c)
		return nil
	})
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	var w io.WriteCloser = f
	if strings.HasSuffix(path, ".gz") {
		w = gzip.NewWriter(f)
	}
	if err := evaldata.WriteNameStatusLog(w, commits); err != nil {
		f.Close()
		return err
	}
	if w != io.WriteCloser(f) {
		if err := w.Close(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("wrote %d commits to %s (%d with renames followed by blob id only: contents missing)\n", len(commits), path, exact)
	return nil
}

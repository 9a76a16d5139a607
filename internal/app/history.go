package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/cochange"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/hooks"
	"github.com/git-synaptic/git-synaptic/notes"
)

// ErrNoCommits is returned when the repository has no commits to work on.
var ErrNoCommits = errors.New("this repository has no commits yet")

const historyTipsKey = "history:tips"

// IndexOptions select which history Index walks.
type IndexOptions struct {
	All      bool      // every local branch
	Branch   string    // one branch (default: HEAD)
	Since    time.Time // only commits after this
	Max      int       // at most this many commits (0: no limit)
	Progress func(done, total int)
}

// IndexReport says what Index did.
type IndexReport struct {
	Indexed int           `json:"indexed"`
	Seen    int           `json:"seen"`
	Revs    []string      `json:"revs"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Index adds commits of the history to the cache as searchable git_commit
// entries (derived data: the history stays the truth) with their files for
// co-change mining. Commits already indexed are skipped, and the tips walked
// by earlier full runs bound the walk, so a second run costs one git call.
func (s *Service) Index(ctx context.Context, opt IndexOptions) (IndexReport, error) {
	start := time.Now()
	rep := IndexReport{}
	c, err := s.openCache()
	if err != nil {
		return rep, err
	}
	var revs []string
	switch {
	case opt.All:
		b, err := s.repo.Branches()
		if err != nil {
			return rep, err
		}
		revs = b
	case opt.Branch != "":
		revs = []string{opt.Branch}
	default:
		revs = []string{"HEAD"}
	}
	if len(revs) == 0 {
		return rep, ErrNoCommits
	}
	rep.Revs = revs
	// Resolve what we walk now, and what earlier full walks covered.
	var tips []string
	for _, r := range revs {
		h, err := s.repo.ResolveCommit(ctx, r)
		if ctx.Err() != nil {
			return rep, ctx.Err() // cancelled: say so, not "no commits"
		}
		if err != nil {
			return rep, fmt.Errorf("%w: %v", ErrNoCommits, err)
		}
		tips = append(tips, h.String())
	}
	known, err := c.Meta(ctx, historyTipsKey)
	if err != nil {
		return rep, err
	}
	var exclude []string
	for _, k := range strings.Fields(known) {
		if len(k) == 40 && s.repo.HasObject(gitstore.NewHash(k)) {
			exclude = append(exclude, k)
		}
	}
	lo := gitstore.LogOptions{Revs: tips, Exclude: exclude, Since: opt.Since, Max: opt.Max}
	total := 0
	if opt.Progress != nil {
		if total, err = s.repo.CountCommits(ctx, lo); err != nil {
			return rep, err
		}
		opt.Progress(0, total)
	}
	branch := s.repo.CurrentBranch()
	if opt.Branch != "" {
		branch = opt.Branch
	}
	err = s.inTx(ctx, func(tx *cache.Tx) error {
		var err error
		rep.Seen, rep.Indexed, err = s.logInto(ctx, tx, lo, branch, func(seen int) {
			if opt.Progress != nil && seen%200 == 0 {
				opt.Progress(seen, total)
			}
		})
		if err != nil || !opt.Since.IsZero() || opt.Max != 0 {
			return err
		}
		return tx.SetMeta(historyTipsKey, mergeTips(exclude, tips))
	})
	if err != nil {
		return rep, err
	}
	if opt.Progress != nil {
		opt.Progress(rep.Seen, max(total, rep.Seen))
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

func mergeTips(a, b []string) string {
	seen := map[string]bool{}
	var out []string
	for _, t := range append(append([]string(nil), a...), b...) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	// Bound the list: old tips are almost always ancestors of newer ones.
	if len(out) > 64 {
		out = out[len(out)-64:]
	}
	return strings.Join(out, " ")
}

// inTx runs f in one cache transaction.
func (s *Service) inTx(ctx context.Context, f func(*cache.Tx) error) error {
	c, err := s.openCache()
	if err != nil {
		return err
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// logInto indexes the commits lo selects into tx; it reports how many it
// walked and how many were new. each, if set, sees the running count.
func (s *Service) logInto(ctx context.Context, tx *cache.Tx, lo gitstore.LogOptions, branch string, each func(seen int)) (seen, added int, err error) {
	err = s.repo.History(ctx, lo, func(gc gitstore.Commit) error {
		seen++
		if each != nil {
			each(seen)
		}
		rec := cache.CommitRecord{SHA: gc.SHA, Author: gc.Author, Message: gc.Message, Branch: branch, Time: gc.Time, Merge: len(gc.Parents) > 1}
		for _, f := range gc.Files {
			rec.Files = append(rec.Files, cache.FileRecord{Path: f.Path, OldPath: f.OldPath, Added: f.Added, Deleted: f.Deleted})
		}
		isNew, err := tx.PutCommit(rec)
		if isNew {
			added++
		}
		return err
	})
	return seen, added, err
}

// Hook runs the work of git hook name; it never fails git: callers report
// errors and exit 0.
func (s *Service) Hook(ctx context.Context, name string, args []string, stdin string) error {
	if what := s.repo.InProgress(); what != "" && name != "post-rewrite" {
		return nil // the sequence's end (post-rewrite) indexes the result
	}
	switch name {
	case "pre-push":
		if len(args) == 0 {
			return nil
		}
		_, err := s.PrePush(ctx, args[0])
		return err
	case "post-commit":
		return s.indexCommits(ctx, gitstore.LogOptions{Revs: []string{"HEAD"}, Max: 1})
	case "post-merge":
		lo := gitstore.LogOptions{Revs: []string{"HEAD"}, Max: 1}
		if orig, err := s.repo.ResolveCommit(ctx, "ORIG_HEAD"); err == nil {
			lo = gitstore.LogOptions{Revs: []string{"HEAD"}, Exclude: []string{orig.String()}, Max: 5000}
		}
		if err := s.indexCommits(ctx, lo); err != nil {
			return err
		}
		_, err := s.ready(ctx) // memory that arrived with the pull
		return err
	case "post-checkout":
		// Only keep an already indexed history current, and boundedly.
		c, err := s.openCache()
		if err != nil {
			return err
		}
		if known, _ := c.Meta(ctx, historyTipsKey); known == "" || len(args) < 3 || args[2] != "1" {
			return nil
		}
		_, err = s.Index(ctx, IndexOptions{Max: 500})
		return err
	case "post-rewrite":
		var olds, news []string
		for _, line := range strings.Split(stdin, "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && len(f[0]) == 40 && len(f[1]) == 40 {
				olds, news = append(olds, f[0]), append(news, f[1])
			}
		}
		if len(news) == 0 {
			return nil
		}
		err := s.inTx(ctx, func(tx *cache.Tx) error {
			for _, o := range olds {
				if err := tx.DeleteCommit(o); err != nil {
					return err
				}
			}
			_, _, err := s.logInto(ctx, tx, gitstore.LogOptions{Revs: news, NoWalk: true}, s.repo.CurrentBranch(), nil)
			return err
		})
		if err != nil {
			return err
		}
		// git copied the notes of rewritten commits (notes.rewriteRef);
		// drop the copies left on commits nothing points to any more.
		for i, o := range olds {
			if i == 200 {
				break
			}
			if _, err := s.repo.DropStaleNote(ctx, o); err != nil {
				return err
			}
		}
		_, err = s.ready(ctx)
		return err
	}
	return fmt.Errorf("unknown hook %q (want one of %s)", name, strings.Join(hooks.Names, ", "))
}

// indexCommits indexes the commits lo selects; on the hooks' hot path, so
// it spends no git call beyond the one log (an unborn HEAD just indexes
// nothing).
func (s *Service) indexCommits(ctx context.Context, lo gitstore.LogOptions) error {
	if s.repo.Unborn() {
		return nil
	}
	return s.inTx(ctx, func(tx *cache.Tx) error {
		_, _, err := s.logInto(ctx, tx, lo, s.repo.CurrentBranch(), nil)
		return err
	})
}

// InstallHooks installs the git hooks (see package hooks).
func (s *Service) InstallHooks(ctx context.Context) (hooks.Report, error) {
	dir, err := s.repo.HooksDir(ctx)
	if err != nil {
		return hooks.Report{}, err
	}
	return hooks.Install(dir)
}

// UninstallHooks removes the git hooks, restoring chained ones.
func (s *Service) UninstallHooks(ctx context.Context) (hooks.Report, error) {
	dir, err := s.repo.HooksDir(ctx)
	if err != nil {
		return hooks.Report{}, err
	}
	return hooks.Uninstall(dir)
}

// HooksStatus describes the installed hooks.
func (s *Service) HooksStatus(ctx context.Context) (string, map[string]string, error) {
	dir, err := s.repo.HooksDir(ctx)
	if err != nil {
		return "", nil, err
	}
	return dir, hooks.Status(dir), nil
}

// model builds the co-change model from the indexed history, first
// indexing new commits of HEAD (at most maxNew of them when maxNew > 0, so
// an agent's session start never waits on a huge unindexed history).
func (s *Service) model(ctx context.Context, maxNew int, progress func(done, total int)) (*cochange.Model, error) {
	if _, err := s.Index(ctx, IndexOptions{Max: maxNew, Progress: progress}); err != nil {
		return nil, err
	}
	c, err := s.openCache()
	if err != nil {
		return nil, err
	}
	m := cochange.New(cochange.Options{})
	err = c.EachCommit(ctx, func(_ string, t time.Time, files []cache.FileRecord) {
		names := make([]string, len(files))
		for i, f := range files {
			if f.OldPath != "" {
				m.Rename(f.OldPath, f.Path)
			}
			names[i] = f.Path
		}
		m.Learn(cochange.Commit{Time: t, Files: names})
	})
	return m, err
}

// Cochanges lists the files that usually change with file.
func (s *Service) Cochanges(ctx context.Context, file string, n int, progress func(done, total int)) ([]cochange.Suggestion, int, error) {
	m, err := s.model(ctx, 0, progress)
	if err != nil {
		return nil, 0, err
	}
	return m.Partners(file, n), m.FileCommits(file), nil
}

// SuggestRequest asks what else usually changes with some files.
type SuggestRequest struct {
	Files    []string // explicit files; empty: the working tree's changes
	Staged   bool     // with no Files: only staged changes
	Method   cochange.Method
	N        int
	MaxNew   int // index at most this many new commits first (0: all)
	Progress func(done, total int)
}

// Suggest ranks files that usually change with the given (or currently
// changed) files but are not among them.
func (s *Service) Suggest(ctx context.Context, req SuggestRequest) (query []string, out []cochange.Suggestion, err error) {
	if s.repo.Unborn() {
		return nil, nil, ErrNoCommits
	}
	query = req.Files
	if len(query) == 0 && s.repo.WorkTree() == "" {
		return nil, nil, fmt.Errorf("%w: a bare repository has no changed files to suggest for; name the files (git synaptic suggest FILE...)", notes.ErrInvalid)
	}
	if len(query) == 0 {
		if query, err = s.repo.ChangedFiles(ctx, req.Staged); err != nil {
			return nil, nil, err
		}
	}
	if len(query) == 0 {
		return nil, nil, nil
	}
	m, err := s.model(ctx, req.MaxNew, req.Progress)
	if err != nil {
		return query, nil, err
	}
	if req.Method == "" {
		req.Method = cochange.Weighted
	}
	return query, m.Suggest(query, req.Method, req.N), nil
}

package history

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/cochange"
	"github.com/git-synaptic/git-synaptic/internal/atomicfile"
	"github.com/git-synaptic/git-synaptic/internal/excerpt"
	"github.com/git-synaptic/git-synaptic/internal/regular"
)

// model returns the co-change model of the indexed history, first
// indexing new commits of HEAD (at most maxNew of them when maxNew > 0, so
// an agent's session start never waits on a huge unindexed history). It
// loads the model snapshot and learns only the commits indexed since.
func (h *Code) model(ctx context.Context, maxNew int, progress func(done, total int)) (*cochange.Model, error) {
	if _, err := h.Index(ctx, IndexOptions{Max: maxNew, Progress: progress}); err != nil {
		return nil, err
	}
	c, err := h.cache()
	if err != nil {
		return nil, err
	}
	opt, err := h.cochangeOptions(ctx)
	if err != nil {
		return nil, err
	}
	state, err := c.CommitsState(ctx)
	if err != nil {
		return nil, err
	}
	path := h.snapshot
	key := snapshotKey(opt)
	m, from := loadSnapshot(path, key)
	if m != nil {
		if from == state {
			return m, nil
		}
		ok, err := c.EachCommitAfter(ctx, from, learner(m))
		if err != nil {
			return nil, err
		}
		if !ok {
			m = nil // commits were dropped (a rebase): learn everything again
		}
	}
	if m == nil {
		m = cochange.New(opt)
		if err := c.EachCommit(ctx, learner(m)); err != nil {
			return nil, err
		}
	}
	// A snapshot that cannot be written costs speed, not answers.
	_ = writeSnapshot(path, key, state, m)
	return m, nil
}

// learner feeds indexed commits to m.
func learner(m *cochange.Model) func(string, time.Time, []cache.FileRecord) {
	return func(_ string, t time.Time, files []cache.FileRecord) { m.Learn(commitOf(t, files)) }
}

// commitOf is an indexed commit as the co-change model learns it.
func commitOf(t time.Time, files []cache.FileRecord) cochange.Commit {
	c := cochange.Commit{Time: t, Files: make([]string, len(files))}
	for i, f := range files {
		c.Files[i] = f.Path
		if f.OldPath != "" {
			c.Renames = append(c.Renames, cochange.Rename{From: f.OldPath, To: f.Path})
		}
		if f.Deleted {
			c.Gone = append(c.Gone, f.Path)
		}
	}
	return c
}

// snapshotKey names the model a snapshot holds: the cache schema and the
// model's options.
func snapshotKey(opt cochange.Options) string {
	return fmt.Sprintf("schema %d options %+v", cache.SchemaVersion, opt)
}

// loadSnapshot reads the model snapshot at path if it was made with key,
// and the commits state it covers; nil when there is none to use.
func loadSnapshot(path, key string) (*cochange.Model, string) {
	b, err := regular.ReadFile(path, 1<<30)
	if err != nil {
		return nil, ""
	}
	head, body, ok := bytes.Cut(b, []byte{0})
	if !ok {
		return nil, ""
	}
	k, state, ok := bytes.Cut(head, []byte{'\n'})
	if !ok || string(k) != key {
		return nil, ""
	}
	m, err := cochange.Load(body)
	if err != nil {
		return nil, ""
	}
	return m, string(state)
}

// writeSnapshot replaces the snapshot at path atomically, and removes
// temporary files that killed writers left (a write takes milliseconds:
// one older than a minute is nobody's).
func writeSnapshot(path, key, state string, m *cochange.Model) error {
	if stale, _ := filepath.Glob(path + ".*.tmp"); len(stale) > 0 {
		for _, f := range stale {
			if fi, err := os.Stat(f); err == nil && time.Since(fi.ModTime()) > time.Minute {
				os.Remove(f)
			}
		}
	}
	var b bytes.Buffer
	b.WriteString(key + "\n" + state)
	b.WriteByte(0)
	b.Write(m.Snapshot())
	return atomicfile.Write(path, b.Bytes(), 0o644)
}

// tuningKey holds the last cochange.Tuning of this repository (JSON).
const tuningKey = "cochange:tuning"

// tuneHoldout is how many recent commits self-tuning validates on.
const tuneHoldout = 200

// cochangeOptions are the co-change model's options for this repository:
// what self-tuning chose, or the defaults.
func (h *Code) cochangeOptions(ctx context.Context) (cochange.Options, error) {
	t, err := h.Tuning(ctx)
	if err != nil || t == nil {
		return cochange.Options{}, err
	}
	opt := t.Chosen
	opt.MaxFiles = 0 // the cap is the product's (DefaultMaxFiles), not tuned
	return opt, nil
}

// Tuning is the last self-tuning of this repository, or nil.
func (h *Code) Tuning(ctx context.Context) (*cochange.Tuning, error) {
	c, err := h.cache()
	if err != nil {
		return nil, err
	}
	v, err := c.Meta(ctx, tuningKey)
	if err != nil || v == "" {
		return nil, err
	}
	var t cochange.Tuning
	if json.Unmarshal([]byte(v), &t) != nil {
		return nil, nil // unreadable: the defaults, until the next index tunes again
	}
	return &t, nil
}

// tune chooses the co-change options that best predict this repository's
// own recent commits (see cochange.Tune), when there are enough of them
// and the history grew by a quarter since the last tuning; nil when it did
// not tune.
func (h *Code) tune(ctx context.Context) (*cochange.Tuning, error) {
	old, err := h.Tuning(ctx)
	if err != nil {
		return nil, err
	}
	c, err := h.cache()
	if err != nil {
		return nil, err
	}
	n, err := c.CountCommits(ctx)
	if err != nil || n < 4*tuneHoldout || old != nil && n < old.Commits+old.Commits/4 {
		return nil, err
	}
	var history []cochange.Commit
	err = c.EachCommit(ctx, func(_ string, t time.Time, files []cache.FileRecord) {
		history = append(history, commitOf(t, files))
	})
	if err != nil {
		return nil, err
	}
	t := cochange.Tune(history, tuneHoldout)
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	return &t, h.update(ctx, func(tx *cache.Tx) error { return tx.SetMeta(tuningKey, string(b)) })
}

// Cochanges lists the files that usually change with file, ranked by
// method (default: the weighted recommender suggest uses).
func (h *Code) Cochanges(ctx context.Context, file string, method cochange.Method, n int, progress func(done, total int)) ([]cochange.Suggestion, int, error) {
	m, err := h.model(ctx, 0, progress)
	if err != nil {
		return nil, 0, err
	}
	if method == "" {
		method = cochange.Weighted
	}
	return m.Suggest([]string{file}, method, n), m.FileCommits(file), nil
}

// NoCochanges says why file, which no commit the co-change model learned
// from touched, has no co-changes: every indexed commit that touched it
// was too large to learn pairs from (more than cochange.DefaultMaxFiles
// files), or none did.
func (h *Code) NoCochanges(ctx context.Context, file string) (string, error) {
	swept := 0
	c, err := h.cache()
	if err != nil {
		return "", err
	}
	err = c.EachCommit(ctx, func(_ string, _ time.Time, files []cache.FileRecord) {
		if len(files) > cochange.DefaultMaxFiles && slices.ContainsFunc(files, func(f cache.FileRecord) bool { return f.Path == file }) {
			swept++
		}
	})
	if err != nil {
		return "", err
	}
	if swept == 0 {
		return file + ": no indexed commit touches it (is the path relative to the repository root?)", nil
	}
	return fmt.Sprintf("%s changed only in %s of more than %d files, which are ignored for pairs (sweeping changes couple everything)", file, excerpt.Plural(swept, "commit"), cochange.DefaultMaxFiles), nil
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
func (h *Code) Suggest(ctx context.Context, req SuggestRequest) (query []string, out []cochange.Suggestion, err error) {
	if h.repo.Unborn() {
		return nil, nil, ErrNoCommits
	}
	query = req.Files
	if len(query) == 0 && h.repo.WorkTree() == "" {
		return nil, nil, ErrNoWorkTree
	}
	if len(query) == 0 {
		if query, err = h.repo.ChangedFiles(ctx, req.Staged); err != nil {
			return nil, nil, err
		}
	}
	if len(query) == 0 {
		return nil, nil, nil
	}
	m, err := h.model(ctx, req.MaxNew, req.Progress)
	if err != nil {
		return query, nil, err
	}
	if req.Method == "" {
		req.Method = cochange.Weighted
	}
	return query, m.Suggest(query, req.Method, req.N), nil
}

package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// git gc --prune=now beside a writer can delete what the writer has just
// written: gc marks what the refs reach when it starts, and a commit the
// writer's ref points at a moment later is, to it, unreachable and loose.
// git documents --prune=now as unsafe beside writers; memory must not
// report success for data it lost. So after moving a ref, Append waits
// for a gc that was running to end, checks that every object the new
// commit added is present, and writes again (the same content gives the
// same hashes) whatever was pruned.
//
// It waits for the gc however long it runs: a gc of a million entries
// takes a minute and a half, and a write that stopped waiting after 30 s
// found nothing missing yet, reported success, and lost its commit to
// the prune that came after (the ref then named a missing commit, and
// every later save failed). A gc.pid whose process is gone (a gc
// killed) does not hold a write up: git's own rule, the process looked
// up on this host, or the file older than 12 hours.

// ErrIncomplete is returned when a memory commit lacks objects.
var ErrIncomplete = errors.New("memory commit is incomplete (objects missing, e.g. pruned by git gc --prune=now)")

// awaitGC waits while a git gc runs in this repository (gcRunning), or
// until ctx ends. Past a second, it says so once, through ctx's notice
// (WithGCNotice).
func (r *Repo) awaitGC(ctx context.Context) {
	pid := filepath.Join(r.commonDir, "gc.pid")
	say, _ := ctx.Value(gcNoticeKey{}).(func())
	start := time.Now()
	for gcRunning(pid) {
		if say != nil && time.Since(start) > time.Second {
			say()
			say = nil // once
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type gcNoticeKey struct{}

// WithGCNotice returns ctx with say, which a write made with it calls
// once when it has waited a second for a running git gc to end: the
// write is done, but not confirmed until that gc has pruned (at a
// million entries a gc takes a minute and a half).
func WithGCNotice(ctx context.Context, say func()) context.Context {
	return context.WithValue(ctx, gcNoticeKey{}, say)
}

// gcRunning reports whether the gc.pid file at path says a git gc is
// running, as git itself reads it (gc.c): "<pid> <host>", written whole
// (through a lock file), stale when older than 12 hours or when its host
// is this one and no process has its pid, and no gc when it cannot be
// read so.
func gcRunning(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || time.Since(fi.ModTime()) > 12*time.Hour {
		return false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false // gone between the two
	}
	var pid int
	var host string
	if n, _ := fmt.Sscanf(string(b), "%d %s", &pid, &host); n != 2 || pid <= 0 {
		return false
	}
	if me, err := os.Hostname(); err == nil && me == host {
		return processExists(pid)
	}
	return true // another host's gc (a repository on a shared disk)
}

// Missing lists the objects commit adds over base (ZeroHash: all of them)
// that this repository lacks: the commit itself, then trees and blobs.
// Subtrees equal to base's are not entered, so the cost follows the size
// of the change.
func (r *Repo) Missing(commit, base Hash) ([]Hash, error) {
	if r.st.HasEncodedObject(commit) != nil {
		return []Hash{commit}, nil
	}
	nt, err := r.CommitTree(commit)
	if err != nil {
		return nil, err
	}
	var ot Hash
	if !base.IsZero() {
		if ot, err = r.CommitTree(base); err != nil {
			ot = ZeroHash // base unreadable: check everything
		}
	}
	var missing []Hash
	err = r.missingTrees(ot, nt, &missing)
	return missing, err
}

func (r *Repo) missingTrees(old, tree Hash, missing *[]Hash) error {
	if old == tree {
		return nil
	}
	if r.st.HasEncodedObject(tree) != nil {
		*missing = append(*missing, tree)
		return nil
	}
	entries, err := r.readTree(tree)
	if err != nil {
		return err
	}
	var before []object.TreeEntry
	if !old.IsZero() {
		before, _ = r.readTree(old) // unreadable: check everything
	}
	return pairEntries(before, entries, func(prev, e *object.TreeEntry) error {
		switch {
		case e == nil || prev != nil && prev.Hash == e.Hash:
			return nil
		case e.Mode == filemode.Dir:
			var ph Hash
			if prev != nil {
				ph = prev.Hash
			}
			return r.missingTrees(ph, e.Hash, missing)
		case r.st.HasEncodedObject(e.Hash) != nil:
			*missing = append(*missing, e.Hash)
		}
		return nil
	})
}

// heal makes sure commit (written onto parent from files) is complete
// once any gc running now has ended, writing again what was pruned.
//
// parent may be another process's write that the same gc pruned, and
// commit cannot be written again before that process has written its
// own again: a try that fails waits longer for it each time (healWait,
// healTries: about six seconds in all) instead of failing at once.
func (r *Repo) heal(ctx context.Context, commit, parent Hash, files []File, sig Signature, msg string) error {
	var err error
	failed := 0
	for range healTries {
		if err != nil {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w (%w)", err, ctx.Err())
			case <-time.After(healWait << (failed - 1)):
			}
		}
		r.awaitGC(ctx)
		missing, merr := r.Missing(commit, parent)
		if merr == nil && len(missing) == 0 {
			return nil
		}
		var again Hash
		if again, err = r.rewrite(parent, files, sig, msg); err != nil {
			err = fmt.Errorf("write again what git gc pruned: %w", err)
			failed++
			continue
		}
		if again != commit {
			return fmt.Errorf("%w: %s rebuilt as %s", ErrIncomplete, commit, again)
		}
	}
	missing, merr := r.Missing(commit, parent)
	switch {
	case merr != nil && err != nil:
		return err
	case merr != nil:
		return merr
	case len(missing) > 0:
		return fmt.Errorf("%w: %d objects of %s", ErrIncomplete, len(missing), commit)
	}
	return nil // complete, whatever its parent lacks: its own writer's to heal
}

// healTries and healWait: heal tries healTries times; after a try that
// failed, it waits healWait, then twice the wait before after each next.
const (
	healTries = 7
	healWait  = 100 * time.Millisecond
)

// rewrite writes files onto parent again, as the commit it returns.
func (r *Repo) rewrite(parent Hash, files []File, sig Signature, msg string) (Hash, error) {
	blobs, release, err := r.writeBlobs(files)
	if err != nil {
		return ZeroHash, err
	}
	defer release()
	return r.commitOnto(parent, blobs, sig, msg)
}

// MissingSince lists the objects reachable from ref's commit tip but not
// from bases (commits known complete; none: the whole history) that the
// repository holding ref lacks, tip itself when it is gone. A base that
// repository does not hold is ignored.
func (r *Repo) MissingSince(ctx context.Context, ref string, tip Hash, bases ...Hash) ([]Hash, error) {
	if s, err := r.side(ref, false); err != nil || s == nil {
		return []Hash{tip}, err
	} else if s != r {
		return s.MissingSince(ctx, ref, tip, bases...)
	}
	if r.st.HasEncodedObject(tip) != nil {
		return []Hash{tip}, nil
	}
	args := []string{"rev-list", "--objects", "--missing=print", tip.String()}
	for _, base := range bases {
		if !base.IsZero() && r.st.HasEncodedObject(base) == nil {
			args = append(args, "^"+base.String())
		}
	}
	out, err := r.run(ctx, nil, nil, args...)
	if err != nil {
		// rev-list stops at the first commit it cannot read: the history
		// from tip is broken somewhere.
		var ge *GitError
		if errors.As(err, &ge) && ctx.Err() == nil {
			return []Hash{tip}, nil
		}
		return nil, err
	}
	var missing []Hash
	for _, line := range strings.Split(out, "\n") {
		if h, ok := strings.CutPrefix(line, "?"); ok && len(strings.TrimSpace(h)) == 40 {
			missing = append(missing, NewHash(strings.TrimSpace(h)))
		}
	}
	return missing, nil
}

// Parents returns commit's parents.
func (r *Repo) Parents(commit Hash) ([]Hash, error) {
	obj, err := r.st.EncodedObject(plumbing.CommitObject, commit)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", commit, err)
	}
	c, err := object.DecodeCommit(r.st, obj)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", commit, err)
	}
	return c.ParentHashes, nil
}

// TopNames lists the names at the root of commit's tree.
func (r *Repo) TopNames(commit Hash) ([]string, error) {
	t, err := r.CommitTree(commit)
	if err != nil {
		return nil, err
	}
	entries, err := r.readTree(t)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	return names, nil
}

// Replace points ref, if it still points at old, at a new commit that
// adds files onto base (ZeroHash: onto nothing), in one step: repair uses
// it so that a process killed half-way leaves the ref either damaged or
// mended, never moved back without what it was to get again.
func (r *Repo) Replace(ctx context.Context, ref string, old, base Hash, files []File, sig Signature, msg string) (Hash, error) {
	if s, err := r.side(ref, true); err != nil || s != r {
		if err != nil {
			return ZeroHash, err
		}
		return s.Replace(ctx, ref, old, base, files, sig, msg)
	}
	blobs, release, err := r.writeBlobs(files)
	if err != nil {
		return ZeroHash, err
	}
	defer release()
	c, err := r.commitOnto(base, blobs, sig, msg)
	if err != nil {
		return ZeroHash, err
	}
	if err := r.CompareAndSwap(ctx, ref, c, old); err != nil {
		return ZeroHash, err
	}
	return c, r.heal(ctx, c, base, files, sig, msg)
}

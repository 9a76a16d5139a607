package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// IsAncestor reports whether commit a is an ancestor of (or equal to) b.
func (r *Repo) IsAncestor(ctx context.Context, a, b Hash) (bool, error) {
	if a == b {
		return true, nil
	}
	return r.mergeBase(ctx, "--is-ancestor", a.String(), b.String())
}

// SharesHistory reports whether commits a and b have a common ancestor.
func (r *Repo) SharesHistory(ctx context.Context, a, b Hash) (bool, error) {
	return r.mergeBase(ctx, a.String(), b.String())
}

// mergeBase runs git merge-base with args: true when it exits 0, false
// when it exits 1 (no such ancestry), an error otherwise.
func (r *Repo) mergeBase(ctx context.Context, args ...string) (bool, error) {
	_, err := r.run(ctx, nil, nil, append([]string{"merge-base"}, args...)...)
	if err == nil {
		return true, nil
	}
	var ge *GitError
	var ee *exec.ExitError
	if errors.As(err, &ge) && errors.As(ge.Err, &ee) && ee.ExitCode() == 1 {
		return false, nil
	}
	return false, err
}

// MergeResult says what MergeInto did.
type MergeResult string

// Merge outcomes.
const (
	MergeUpToDate    MergeResult = "up-to-date"
	MergeFastForward MergeResult = "fast-forward"
	MergeCreated     MergeResult = "created"
	MergeUnion       MergeResult = "merged"
)

// MergeInto merges commit theirs into ref: nothing when ref already contains
// it, a fast-forward when ref is behind, else a merge commit whose tree is
// the union of both trees. Memory trees only ever gain files, so the union
// loses nothing; two different blobs at one path (which the format never
// produces) are both kept, the one with the larger hash under "name~hash",
// so both clones reach the same tree.
func (r *Repo) MergeInto(ctx context.Context, ref string, theirs Hash, sig Signature) (MergeResult, Hash, error) {
	if _, err := r.CommitTree(theirs); err != nil {
		return "", ZeroHash, err
	}
	var res MergeResult
	var tip Hash
	err := casRetry(ctx, "merge into "+ref, func() error {
		ours, err := r.Tip(ref)
		if err != nil {
			return err
		}
		if ours.IsZero() {
			res, tip = MergeCreated, theirs
			return r.CompareAndSwap(ctx, ref, theirs, ours)
		}
		if ok, err := r.IsAncestor(ctx, theirs, ours); err != nil {
			return err
		} else if ok {
			res, tip = MergeUpToDate, ours
			return nil
		}
		if ok, err := r.IsAncestor(ctx, ours, theirs); err != nil {
			return err
		} else if ok {
			res, tip = MergeFastForward, theirs
			return r.CompareAndSwap(ctx, ref, theirs, ours)
		}
		ot, err := r.CommitTree(ours)
		if err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		tt, err := r.CommitTree(theirs)
		if err != nil {
			return err
		}
		tree, err := r.unionTrees(ot, tt)
		if err != nil {
			return err
		}
		c, err := r.writeCommit(tree, []Hash{ours, theirs}, sig, "Merge memory "+theirs.String()[:12]+" into "+ref)
		if err != nil {
			return err
		}
		res, tip = MergeUnion, c
		return r.CompareAndSwap(ctx, ref, c, ours)
	})
	return res, tip, err
}

func (r *Repo) unionTrees(a, b Hash) (Hash, error) {
	if a == b || b.IsZero() {
		return a, nil
	}
	if a.IsZero() {
		return b, nil
	}
	ae, err := r.readTree(a)
	if err != nil {
		return ZeroHash, err
	}
	be, err := r.readTree(b)
	if err != nil {
		return ZeroHash, err
	}
	out := map[string]object.TreeEntry{}
	for _, e := range ae {
		out[e.Name] = e
	}
	for _, e := range be {
		o, ok := out[e.Name]
		switch {
		case !ok:
			out[e.Name] = e
		case o.Hash == e.Hash && o.Mode == e.Mode:
		case o.Mode == filemode.Dir && e.Mode == filemode.Dir:
			h, err := r.unionTrees(o.Hash, e.Hash)
			if err != nil {
				return ZeroHash, err
			}
			out[e.Name] = object.TreeEntry{Name: e.Name, Mode: filemode.Dir, Hash: h}
		default:
			keep, other := o, e
			if other.Mode == filemode.Dir || (keep.Mode != filemode.Dir && other.Hash.String() < keep.Hash.String()) {
				keep, other = other, keep
			}
			out[e.Name] = keep
			other.Name = e.Name + "~" + other.Hash.String()[:12]
			out[other.Name] = other
		}
	}
	entries := make([]object.TreeEntry, 0, len(out))
	for _, e := range out {
		entries = append(entries, e)
	}
	return r.writeTree(entries)
}

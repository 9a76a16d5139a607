package gitstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Rewrite rewrites every commit reachable from ref without the paths in
// drop, then (when add is not empty) appends a commit adding those files,
// and moves ref to the result with a compare-and-swap. Commits whose tree
// and parents come out unchanged keep their hash, so rewriting a history
// that never held the paths changes nothing. Authors, committers, dates
// are kept; messages pass through scrub when it is not nil. It returns the
// old and new tips.
func (r *Repo) Rewrite(ctx context.Context, ref string, drop map[string]bool, scrub func(string) string, add []File, sig Signature, msg string) (old, tip Hash, err error) {
	if s, err := r.side(ref, true); err != nil || s != r {
		if err != nil {
			return ZeroHash, ZeroHash, err
		}
		return s.Rewrite(ctx, ref, drop, scrub, add, sig, msg)
	}
	err = casRetry(ctx, "rewrite "+ref, func() error {
		if old, err = r.Tip(ref); err != nil {
			return err
		}
		if old.IsZero() {
			return fmt.Errorf("%s does not exist", ref)
		}
		rw := &rewriter{r: r, drop: drop, scrub: scrub, commits: map[Hash]Hash{}, trees: map[string]Hash{}}
		if tip, err = rw.commit(old); err != nil {
			return err
		}
		if len(add) > 0 {
			blobs, release, err := r.writeBlobs(add)
			if err != nil {
				return err
			}
			defer release()
			if tip, err = r.commitOnto(tip, blobs, sig, msg); err != nil {
				return err
			}
		}
		if tip == old {
			return nil
		}
		return r.CompareAndSwap(ctx, ref, tip, old)
	})
	return old, tip, err
}

type rewriter struct {
	r       *Repo
	drop    map[string]bool
	scrub   func(string) string
	commits map[Hash]Hash   // old commit → new
	trees   map[string]Hash // prefix + old tree → new
}

// commit rewrites c after its parents, iteratively (histories are long).
func (rw *rewriter) commit(start Hash) (Hash, error) {
	stack := []Hash{start}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		if _, done := rw.commits[c]; done {
			stack = stack[:len(stack)-1]
			continue
		}
		cm, err := object.GetCommit(rw.r.st, c)
		if err != nil {
			return ZeroHash, fmt.Errorf("commit %s: %w", c, err)
		}
		pending := false
		for _, p := range cm.ParentHashes {
			if _, done := rw.commits[p]; !done {
				stack = append(stack, p)
				pending = true
			}
		}
		if pending {
			continue
		}
		stack = stack[:len(stack)-1]
		tree, err := rw.tree("", cm.TreeHash)
		if err != nil {
			return ZeroHash, err
		}
		parents := make([]Hash, len(cm.ParentHashes))
		message := cm.Message
		if rw.scrub != nil {
			message = rw.scrub(message)
		}
		same := tree == cm.TreeHash && message == cm.Message
		for i, p := range cm.ParentHashes {
			parents[i] = rw.commits[p]
			same = same && parents[i] == p
		}
		if same {
			rw.commits[c] = c
			continue
		}
		nc := &object.Commit{Author: cm.Author, Committer: cm.Committer, Message: message, TreeHash: tree, ParentHashes: parents}
		obj := rw.r.st.NewEncodedObject()
		if err := nc.Encode(obj); err != nil {
			return ZeroHash, err
		}
		h, err := rw.r.st.SetEncodedObject(obj)
		if err != nil {
			return ZeroHash, fmt.Errorf("write commit: %w", err)
		}
		rw.commits[c] = h
	}
	return rw.commits[start], nil
}

// tree returns tree h (at prefix) without the dropped paths under it.
func (rw *rewriter) tree(prefix string, h Hash) (Hash, error) {
	key := prefix + h.String()
	if t, ok := rw.trees[key]; ok {
		return t, nil
	}
	relevant := false
	for p := range rw.drop {
		if strings.HasPrefix(p, prefix) {
			relevant = true
			break
		}
	}
	if !relevant {
		rw.trees[key] = h
		return h, nil
	}
	entries, err := rw.r.readTree(h)
	if err != nil {
		return ZeroHash, err
	}
	out := entries[:0:0]
	changed := false
	for _, e := range entries {
		p := prefix + e.Name
		switch {
		case e.Mode != filemode.Dir && rw.drop[p]:
			changed = true
			continue
		case e.Mode == filemode.Dir:
			sub, err := rw.tree(p+"/", e.Hash)
			if err != nil {
				return ZeroHash, err
			}
			if sub != e.Hash {
				changed = true
				if sub == emptyTree {
					continue
				}
				e.Hash = sub
			}
		}
		out = append(out, e)
	}
	if !changed {
		rw.trees[key] = h
		return h, nil
	}
	if len(out) == 0 && prefix != "" {
		rw.trees[key] = emptyTree
		return emptyTree, nil
	}
	nt, err := rw.r.writeTree(out)
	if err != nil {
		return ZeroHash, err
	}
	rw.trees[key] = nt
	return nt, nil
}

// emptyTree is git's empty tree; a directory left empty is removed.
var emptyTree = plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

// FilesUnder returns the regular files under dir in commit c's tree, by
// path (empty when dir does not exist).
func (r *Repo) FilesUnder(c Hash, dir string) (map[string]Hash, error) {
	tree, err := r.CommitTree(c)
	if err != nil {
		return nil, err
	}
	out := map[string]Hash{}
	if tree.IsZero() {
		return out, nil
	}
	t, err := object.GetTree(r.st, tree)
	if err != nil {
		return nil, err
	}
	sub, err := t.Tree(dir)
	if err == object.ErrDirectoryNotFound {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	err = sub.Files().ForEach(func(f *object.File) error {
		out[dir+"/"+f.Name] = f.Hash
		return nil
	})
	return out, err
}

// HasPath reports whether commit c's tree holds a file at path.
func (r *Repo) HasPath(c Hash, path string) bool {
	tree, err := r.CommitTree(c)
	if err != nil || tree.IsZero() {
		return false
	}
	t, err := object.GetTree(r.st, tree)
	if err != nil {
		return false
	}
	_, err = t.FindEntry(path)
	return err == nil
}

// CountFiles counts the files under dir (all of the tree when dir is "")
// in commit c's tree, reading trees only.
func (r *Repo) CountFiles(c Hash, dir string) (int, error) {
	tree, err := r.CommitTree(c)
	if err != nil || tree.IsZero() {
		return 0, err
	}
	if dir != "" {
		entries, err := r.readTree(tree)
		if err != nil {
			return 0, err
		}
		tree = ZeroHash
		for _, e := range entries {
			if e.Name == dir && e.Mode == filemode.Dir {
				tree = e.Hash
			}
		}
	}
	return r.countFiles(tree)
}

func (r *Repo) countFiles(tree Hash) (int, error) {
	entries, err := r.readTree(tree)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if e.Mode != filemode.Dir {
			n++
			continue
		}
		k, err := r.countFiles(e.Hash)
		if err != nil {
			return 0, err
		}
		n += k
	}
	return n, nil
}

package memlog

import (
	"context"
	"crypto/sha1"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/git-synaptic/git-synaptic/gitstore"
)

// Memory is a Store (and a Source) held in memory, for tests that need memory's log
// without git. Blobs are named as git names them; commits by a hash of
// their parent, tree and message. It is safe for concurrent use.
type Memory struct {
	mu      sync.Mutex
	refs    map[string]gitstore.Hash
	commits map[gitstore.Hash]map[string]gitstore.Hash // commit → path → blob
	authors map[gitstore.Hash]gitstore.Signature
	blobs   map[gitstore.Hash][]byte
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{refs: map[string]gitstore.Hash{}, commits: map[gitstore.Hash]map[string]gitstore.Hash{}, authors: map[gitstore.Hash]gitstore.Signature{}, blobs: map[gitstore.Hash][]byte{}}
}

// regularFile is the mode of every file Memory holds (git's 100644).
const regularFile = 0o100644

// Tip implements Store.
func (m *Memory) Tip(ref string) (gitstore.Hash, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.refs[ref], nil
}

// Refs implements Store.
func (m *Memory) Refs(prefixes ...string) (map[string]gitstore.Hash, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]gitstore.Hash{}
	for ref, h := range m.refs {
		for _, p := range prefixes {
			if ref == p || strings.HasSuffix(p, "/") && strings.HasPrefix(ref, p) {
				out[ref] = h
			}
		}
	}
	return out, nil
}

// Append implements Store.
func (m *Memory) Append(ctx context.Context, ref string, files []gitstore.File, sig gitstore.Signature, msg string) (commit, parent gitstore.Hash, err error) {
	if err := ctx.Err(); err != nil {
		return gitstore.ZeroHash, gitstore.ZeroHash, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	parent = m.refs[ref]
	tree := maps.Clone(m.commits[parent])
	if tree == nil {
		tree = map[string]gitstore.Hash{}
	}
	for _, f := range files {
		b := blobHash(f.Data)
		m.blobs[b] = slices.Clone(f.Data)
		tree[f.Path] = b
	}
	h := sha1.New()
	fmt.Fprintf(h, "parent %s\nauthor %s <%s> %d\n\n%s\n", parent, sig.Name, sig.Email, sig.When.UnixNano(), msg)
	for _, p := range slices.Sorted(maps.Keys(tree)) {
		fmt.Fprintf(h, "%s %s\n", tree[p], p)
	}
	commit = gitstore.Hash(h.Sum(nil))
	m.commits[commit] = tree
	m.authors[commit] = sig
	m.refs[ref] = commit
	return commit, parent, nil
}

// blobHash is git's name for a blob of data.
func blobHash(data []byte) gitstore.Hash {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return gitstore.Hash(h.Sum(nil))
}

// Diff implements Store.
func (m *Memory) Diff(oldCommit, newCommit gitstore.Hash) ([]gitstore.Change, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	trees := [2]map[string]gitstore.Hash{}
	for i, c := range []gitstore.Hash{oldCommit, newCommit} {
		if c.IsZero() {
			continue
		}
		t, ok := m.commits[c]
		if !ok {
			return nil, fmt.Errorf("memlog: no commit %s", c)
		}
		trees[i] = t
	}
	var out []gitstore.Change
	for p, b := range trees[1] {
		if trees[0][p] != b {
			out = append(out, gitstore.Change{Path: p, Hash: b, Mode: regularFile})
		}
	}
	for p, b := range trees[0] {
		if _, ok := trees[1][p]; !ok {
			out = append(out, gitstore.Change{Path: p, Hash: b, Mode: regularFile, Deleted: true})
		}
	}
	slices.SortFunc(out, func(a, b gitstore.Change) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// ReadBlob implements Store.
func (m *Memory) ReadBlob(h gitstore.Hash, max int64) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.blobs[h]
	switch {
	case !ok:
		return nil, fmt.Errorf("memlog: no blob %s", h)
	case int64(len(data)) > max:
		return nil, fmt.Errorf("blob %s is %d bytes, over the %d-byte limit", h, len(data), max)
	}
	return slices.Clone(data), nil
}

// CompareAndSwap implements Store.
func (m *Memory) CompareAndSwap(ctx context.Context, ref string, newHash, old gitstore.Hash) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refs[ref] != old {
		return fmt.Errorf("%s: %w", ref, gitstore.ErrConflict)
	}
	if _, ok := m.commits[newHash]; !ok {
		return fmt.Errorf("memlog: no commit %s", newHash)
	}
	m.refs[ref] = newHash
	return nil
}

// HasObject implements Source.
func (m *Memory) HasObject(h gitstore.Hash) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, commit := m.commits[h]
	_, blob := m.blobs[h]
	return commit || blob
}

// CommitTree implements Source. Memory names no trees: a commit's tree is
// named as the commit is.
func (m *Memory) CommitTree(c gitstore.Hash) (gitstore.Hash, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.commits[c]; !ok {
		return gitstore.ZeroHash, fmt.Errorf("memlog: no commit %s", c)
	}
	return c, nil
}

// CommitInfo implements Source.
func (m *Memory) CommitInfo(c gitstore.Hash) (string, time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sig, ok := m.authors[c]
	if !ok {
		return "", time.Time{}, fmt.Errorf("memlog: no commit %s", c)
	}
	return fmt.Sprintf("%s <%s>", sig.Name, sig.Email), sig.When, nil
}

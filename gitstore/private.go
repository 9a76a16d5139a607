package gitstore

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Private memory must never leave the clone, and a ref of the shared
// repository cannot promise that: git push --mirror (or any refs/*:refs/*
// refspec) publishes every ref there is. So the refs under PrivatePrefix
// live in a repository of their own inside the git dir
// (synaptic/private.git, shared by every worktree), which no push of the
// repository can reach. Repo routes those refs there, and reads objects
// from both stores, so callers use one Repo for both.

// PrivatePrefix is where private memory refs live, in the private
// repository.
const PrivatePrefix = "refs/synaptic-local/"

// privateSide is the private repository, opened on first use.
type privateSide struct {
	mu   sync.Mutex
	repo *Repo
}

func (r *Repo) privateDir() string {
	return filepath.Join(r.commonDir, "synaptic", "private.git")
}

// isPrivateRef reports whether ref lives in the private repository.
func isPrivateRef(ref string) bool { return strings.HasPrefix(ref, PrivatePrefix) }

// side is the repository holding ref: the private one for private refs
// (created when create is set, else nil when there is none yet), r for
// every other.
func (r *Repo) side(ref string, create bool) (*Repo, error) {
	if r.priv == nil || !isPrivateRef(ref) {
		return r, nil
	}
	return r.privateRepo(create)
}

// privateRepo opens the private repository, creating it when create is
// set, and moves private refs left in the shared repository by an
// earlier version into it. It returns nil, nil when there is none.
func (r *Repo) privateRepo(create bool) (*Repo, error) {
	p := r.priv
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.repo != nil {
		return p.repo, nil
	}
	dir := r.privateDir()
	left, err := r.ownRefs(PrivatePrefix)
	if err != nil {
		return nil, err
	}
	if !isGitDir(dir) {
		if !create && len(left) == 0 {
			return nil, nil
		}
		if err := createBare(dir); err != nil {
			return nil, fmt.Errorf("private memory: create %s: %w", dir, err)
		}
	}
	p.repo = &Repo{gitDir: dir, commonDir: dir, st: newObjectStore(dir)}
	r.st.alt.Store(p.repo.st)
	if len(left) > 0 {
		if err := r.migratePrivate(p.repo, left); err != nil {
			return nil, err
		}
	}
	return p.repo, nil
}

// adopt points the private repository's ref at h, the commit the shared
// repository held for it, unless it already holds h.
func adopt(ctx context.Context, priv *Repo, ref string, h Hash, from string) error {
	cur, err := priv.Tip(ref)
	if err != nil || cur.IsZero() {
		if err == nil {
			err = priv.CompareAndSwap(ctx, ref, h, ZeroHash) // ErrConflict: another process won; look again
		}
		return err
	}
	have, err := priv.IsAncestor(ctx, h, cur)
	if err == nil && !have {
		err = fmt.Errorf("%s holds %s and %s holds %s; neither contains the other (merge them by hand)", from, h, priv.gitDir, cur)
	}
	return err
}

// createBare creates an empty bare repository at dir, whole or not at
// all: it is made beside it and renamed into place, so two processes
// creating it at once (or one killed half-way) leave one complete
// repository.
func createBare(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // gone after a successful rename
	cmd := exec.Command("git", "init", "--bare", "--quiet", "--template=", tmp)
	cmd.Env = cleanEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	if err := os.Rename(tmp, dir); err != nil && !isGitDir(dir) {
		return err
	}
	return nil
}

// migratePrivate copies private refs left in the shared repository into
// the private one, then deletes them there (each only if it did not move
// meanwhile), so that no push of the repository can reach them again.
// The objects arrive under a scratch namespace of this process first
// (two processes may migrate at once); a private ref is
// then created, or left where it is when it already holds them (another
// process migrated first and may have written since), never rewound.
func (r *Repo) migratePrivate(priv *Repo, left map[string]Hash) error {
	ctx := context.Background()
	scratch := fmt.Sprintf("refs/synaptic-migrating/%d/", os.Getpid())
	if _, err := priv.run(ctx, nil, nil, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", r.commonDir, "+"+PrivatePrefix+"*:"+scratch+"*"); err != nil {
		return fmt.Errorf("private memory: move it out of the shared repository: %w", err)
	}
	priv.st.rescan()
	for ref, h := range left {
		if err := casRetry(ctx, "move "+ref, func() error { return adopt(ctx, priv, ref, h, r.commonDir) }); err != nil {
			return fmt.Errorf("private memory: move %s out of the shared repository: %w", ref, err)
		}
		priv.DeleteRef(ctx, scratch+strings.TrimPrefix(ref, PrivatePrefix))
		if _, err := r.run(ctx, nil, nil, "update-ref", "-d", ref, h.String()); err != nil {
			if now, rerr := r.ownRefs(ref); rerr == nil && now[ref] != h {
				continue // another process migrated it first
			}
			return fmt.Errorf("private memory: moved %s, but cannot remove it from the shared repository: %w", ref, err)
		}
	}
	return nil
}

// privateRefs lists the private refs under the prefixes that cover
// PrivatePrefix.
func (r *Repo) privateRefs(prefixes []string) (map[string]Hash, error) {
	var mine []string
	for _, p := range prefixes {
		switch {
		case strings.HasPrefix(p, PrivatePrefix):
			mine = append(mine, p)
		case strings.HasPrefix(PrivatePrefix, p) && strings.HasSuffix(p, "/"):
			mine = append(mine, PrivatePrefix)
		}
	}
	if len(mine) == 0 || r.priv == nil {
		return nil, nil
	}
	priv, err := r.privateRepo(false)
	if err != nil || priv == nil {
		return nil, err
	}
	return priv.ownRefs(mine...)
}

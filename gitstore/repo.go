// Package gitstore is the only package that touches git: objects, refs with
// compare-and-swap updates, tree diffs and union merges, notes, config, and
// fetch/push. It reads and writes objects with go-git and shells out to the
// git binary where go-git lacks a feature or git's own locking matters
// (update-ref, notes, fetch, push, config).
package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
)

// ErrNotRepo is returned when no git repository is found.
var ErrNotRepo = errors.New("not a git repository (or any of the parent directories)")

// ZeroHash is the all-zero object id: "no commit".
var ZeroHash = plumbing.ZeroHash

// Hash is a git object id.
type Hash = plumbing.Hash

// Repo is an open git repository.
type Repo struct {
	gitDir    string // this worktree's git dir
	commonDir string // shared by all worktrees: objects, refs, our cache
	workTree  string // empty for a bare repository
	st        *objectStore
	trees     treeCache    // trees last read or written (objects.go)
	priv      *privateSide // where private refs live; nil in the private repository itself
	config    synapticConfig
	localCfg  localConfig
}

// Open finds the repository containing dir (honouring GIT_DIR and
// GIT_WORK_TREE, as git hooks set them) and opens it.
func Open(dir string) (*Repo, error) {
	gitDir, workTree, err := discover(dir)
	if err != nil {
		return nil, err
	}
	commonDir := gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		commonDir = filepath.Clean(c)
	}
	return &Repo{gitDir: gitDir, commonDir: commonDir, workTree: workTree, st: newObjectStore(commonDir), priv: &privateSide{}}, nil
}

func discover(dir string) (gitDir, workTree string, err error) {
	if gd := os.Getenv("GIT_DIR"); gd != "" {
		if !filepath.IsAbs(gd) {
			gd = filepath.Join(dir, gd)
		}
		wt := os.Getenv("GIT_WORK_TREE")
		if wt == "" && filepath.Base(gd) == ".git" {
			wt = filepath.Dir(gd)
		}
		if !isGitDir(gd) {
			return "", "", fmt.Errorf("%w: GIT_DIR=%s", ErrNotRepo, gd)
		}
		return filepath.Clean(gd), wt, nil
	}
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	for {
		dot := filepath.Join(d, ".git")
		if fi, err := os.Stat(dot); err == nil {
			if fi.IsDir() && isGitDir(dot) {
				return dot, d, nil
			}
			if !fi.IsDir() {
				b, err := os.ReadFile(dot)
				if err == nil && bytes.HasPrefix(b, []byte("gitdir:")) {
					gd := strings.TrimSpace(string(b[len("gitdir:"):]))
					if !filepath.IsAbs(gd) {
						gd = filepath.Join(d, gd)
					}
					return filepath.Clean(gd), d, nil
				}
			}
		}
		if isGitDir(d) { // bare repository
			return d, "", nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", ErrNotRepo
		}
		d = parent
	}
}

func isGitDir(d string) bool {
	for _, p := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(d, p)); err != nil {
			if p == "objects" || p == "refs" {
				// worktree git dirs have neither; they have commondir
				if _, err := os.Stat(filepath.Join(d, "commondir")); err == nil {
					continue
				}
			}
			return false
		}
	}
	return true
}

// Close releases the pack files held open for reading.
func (r *Repo) Close() error {
	if r.priv != nil {
		r.priv.mu.Lock()
		if r.priv.repo != nil {
			r.priv.repo.Close()
		}
		r.priv.mu.Unlock()
	}
	r.trees.release()
	return r.st.Close()
}

// GitDir is this worktree's git directory.
func (r *Repo) GitDir() string { return r.gitDir }

// CommonDir is the git directory shared by all worktrees.
func (r *Repo) CommonDir() string { return r.commonDir }

// WorkTree is the top of the working tree, or "" for a bare repository.
func (r *Repo) WorkTree() string { return r.workTree }

// CurrentBranch is the short name of the checked-out branch, or "" when HEAD
// is detached or unreadable.
func (r *Repo) CurrentBranch() string {
	b, err := os.ReadFile(filepath.Join(r.gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(b))
	if rest, ok := strings.CutPrefix(s, "ref: refs/heads/"); ok {
		return rest
	}
	return ""
}

// GitError is a failed git command with its stderr.
type GitError struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *GitError) Unwrap() error { return e.Err }

// run runs git against this repository and returns its stdout.
func (r *Repo) run(ctx context.Context, stdin []byte, env []string, args ...string) (string, error) {
	return r.runTo(ctx, stdin, env, nil, nil, args...)
}

// runTo is run, with git's standard error also written to progress when
// that is not nil, and started told git's process id when not nil.
func (r *Repo) runTo(ctx context.Context, stdin []byte, env []string, progress io.Writer, started func(pid int), args ...string) (string, error) {
	full := append([]string{"--git-dir=" + r.gitDir}, args...)
	if r.workTree != "" {
		full = append([]string{"--work-tree=" + r.workTree}, full...)
	}
	cmd := exec.CommandContext(ctx, "git", full...)
	if r.workTree != "" {
		cmd.Dir = r.workTree
	} else {
		cmd.Dir = r.gitDir
	}
	cmd.Env = append(cleanEnv(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if progress != nil {
		cmd.Stderr = io.MultiWriter(&errb, progress)
	}
	// When ctx ends, git is killed; a helper it started (ssh,
	// git-remote-https) may still hold the pipes, and must not hold us.
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Start()
	if err == nil {
		if started != nil {
			started(cmd.Process.Pid)
		}
		err = cmd.Wait()
	}
	if err != nil {
		return out.String(), &GitError{Args: args, Stderr: errb.String(), Err: err}
	}
	return out.String(), nil
}

// cleanEnv drops variables a hook may inherit that would redirect our git
// calls (we pass --git-dir explicitly).
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_DIR=") || strings.HasPrefix(kv, "GIT_WORK_TREE=") || strings.HasPrefix(kv, "GIT_INDEX_FILE=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Ident is the git author identity ("Name <email>") git would use for a
// commit here, or an error when none is configured. The common cases
// (environment, repository and global config) are read directly; anything
// else (includes, system config, EMAIL) is left to git var.
func (r *Repo) Ident(ctx context.Context) (string, error) {
	name, email := os.Getenv("GIT_AUTHOR_NAME"), os.Getenv("GIT_AUTHOR_EMAIL")
	// go-git's global scope ignores these variables; leave such setups to git.
	custom := os.Getenv("GIT_CONFIG_GLOBAL") != "" || os.Getenv("GIT_CONFIG") != "" || os.Getenv("GIT_CONFIG_COUNT") != ""
	if (name == "" || email == "") && !custom {
		for _, scope := range []config.Scope{config.LocalScope, config.GlobalScope} {
			var c *config.Config
			var err error
			if scope == config.LocalScope {
				c, err = r.local()
			} else {
				c, err = config.LoadConfig(scope)
			}
			if err != nil || c.Raw.HasSection("include") || c.Raw.HasSection("includeIf") {
				name, email = "", ""
				break
			}
			if name == "" {
				name = c.User.Name
			}
			if email == "" {
				email = c.User.Email
			}
		}
	}
	if name != "" && email != "" {
		return name + " <" + email + ">", nil
	}
	out, err := r.run(ctx, nil, nil, "var", "GIT_AUTHOR_IDENT")
	if err != nil {
		return "", fmt.Errorf("no git identity: git cannot tell who is saving (%s); set it the way git asks:\n  git config --global user.name \"Your Name\"\n  git config --global user.email you@example.com", gitFatal(err))
	}
	s := strings.TrimSpace(out)
	if i := strings.LastIndex(s, ">"); i >= 0 {
		s = s[:i+1]
	}
	return s, nil
}

// gitFatal is the "fatal:" line of a git error, or the whole error.
func gitFatal(err error) string {
	msg := err.Error()
	for _, line := range strings.Split(msg, "\n") {
		if f, ok := strings.CutPrefix(strings.TrimSpace(line), "fatal: "); ok {
			return f
		}
	}
	return msg
}

// RemoteURL is the first URL of a remote, or "" when it has none.
func (r *Repo) RemoteURL(name string) string {
	c, err := r.local()
	if err != nil {
		return ""
	}
	if rc, ok := c.Remotes[name]; ok && len(rc.URLs) > 0 {
		return rc.URLs[0]
	}
	return ""
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// GitVar is git's value of a logical variable (git var NAME), such as
// GIT_PAGER or GIT_EDITOR, as git would choose it in this repository: the
// environment, then its configuration, then git's default.
func (r *Repo) GitVar(ctx context.Context, name string) (string, error) {
	out, err := r.run(ctx, nil, nil, "var", name)
	return strings.TrimSpace(out), err
}

package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// FileChange is one file touched by a commit.
type FileChange struct {
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"` // set for renames
	Added   int    `json:"added"`              // -1 for binary files
	Deleted int    `json:"deleted"`            // -1 for binary files
}

// Commit is a commit of the project's history as the index keeps it.
type Commit struct {
	SHA     string       `json:"sha"`
	Parents []string     `json:"parents"`
	Author  string       `json:"author"`
	Time    time.Time    `json:"time"`
	Message string       `json:"message"`
	Files   []FileChange `json:"files"`
}

// LogOptions select commits for History.
type LogOptions struct {
	Revs    []string // what to walk (default HEAD)
	Exclude []string // commits (and their ancestors) to leave out
	Since   time.Time
	Max     int
	NoWalk  bool // only the named commits, not their ancestors
}

// revArgs are the rev-list options and revisions opt selects.
func (opt LogOptions) revArgs() []string {
	var args []string
	if !opt.Since.IsZero() {
		args = append(args, "--since="+strconv.FormatInt(opt.Since.Unix(), 10))
	}
	if opt.Max > 0 {
		args = append(args, "--max-count="+strconv.Itoa(opt.Max))
	}
	if opt.NoWalk {
		args = append(args, "--no-walk=unsorted")
	}
	revs := opt.Revs
	if len(revs) == 0 {
		revs = []string{"HEAD"}
	}
	args = append(args, "--end-of-options")
	args = append(args, revs...)
	for _, x := range opt.Exclude {
		args = append(args, "^"+x)
	}
	return args
}

const logFormat = "%x1e%H%x1f%P%x1f%an <%ae>%x1f%at%x1f%B%x1f"

// History streams commits with their changed files (renames followed, +/-
// line counts; merge commits carry no files), oldest first, so that a
// consumer storing them in arrival order keeps history order even among
// commits made in the same second. Paths are returned verbatim, whatever
// bytes they hold.
func (r *Repo) History(ctx context.Context, opt LogOptions, fn func(Commit) error) error {
	args := append([]string{"log", "-z", "--numstat", "-M", "--no-color", "--reverse", "--format=" + logFormat}, opt.revArgs()...)
	args = append(args, "--")
	full := append([]string{"--git-dir=" + r.gitDir}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = cleanEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	perr := parseLog(out, fn)
	if perr != nil {
		cmd.Process.Kill()
		io.Copy(io.Discard, out)
	}
	werr := cmd.Wait()
	if perr != nil {
		return perr
	}
	if werr != nil {
		return &GitError{Args: args, Stderr: stderr.String(), Err: werr}
	}
	return nil
}

func parseLog(r io.Reader, fn func(Commit) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		start := 0
		if len(data) > 0 && data[0] == 0x1e {
			start = 1
		}
		if i := bytes.IndexByte(data[start:], 0x1e); i >= 0 {
			return start + i, data[start : start+i], nil
		}
		if atEOF && len(data) > start {
			return len(data), data[start:], nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		c, err := parseCommit(sc.Bytes())
		if err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
	}
	return sc.Err()
}

func parseCommit(rec []byte) (Commit, error) {
	f := bytes.SplitN(rec, []byte{0x1f}, 6)
	if len(f) != 6 {
		return Commit{}, fmt.Errorf("unexpected git log record %q", firstBytes(rec, 80))
	}
	ts, err := strconv.ParseInt(string(f[3]), 10, 64)
	if err != nil {
		return Commit{}, fmt.Errorf("unexpected commit time %q", f[3])
	}
	c := Commit{SHA: string(f[0]), Parents: strings.Fields(string(f[1])), Author: string(f[2]), Time: time.Unix(ts, 0).UTC(),
		Message: strings.TrimSpace(string(f[4]))}
	toks := bytes.Split(bytes.TrimLeft(f[5], "\x00\n"), []byte{0})
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if len(t) == 0 {
			continue
		}
		parts := bytes.SplitN(t, []byte{'\t'}, 3)
		if len(parts) != 3 {
			continue
		}
		fc := FileChange{Added: numstat(parts[0]), Deleted: numstat(parts[1]), Path: string(parts[2])}
		if len(parts[2]) == 0 && i+2 < len(toks) { // rename: old and new follow
			fc.OldPath, fc.Path = string(toks[i+1]), string(toks[i+2])
			i += 2
		}
		c.Files = append(c.Files, fc)
	}
	return c, nil
}

func numstat(b []byte) int {
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return -1
	}
	return n
}

func firstBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// CountCommits counts the commits History would stream (for progress).
func (r *Repo) CountCommits(ctx context.Context, opt LogOptions) (int, error) {
	out, err := r.run(ctx, nil, nil, append([]string{"rev-list", "--count"}, opt.revArgs()...)...)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}

// Branches lists local branch names.
func (r *Repo) Branches() ([]string, error) {
	refs, err := r.Refs("refs/heads/")
	if err != nil {
		return nil, err
	}
	var out []string
	for ref := range refs {
		out = append(out, strings.TrimPrefix(ref, "refs/heads/"))
	}
	return out, nil
}

// HooksDir is where git looks for hooks (core.hooksPath honoured).
func (r *Repo) HooksDir(ctx context.Context) (string, error) {
	out, err := r.run(ctx, nil, nil, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// InProgress names a rebase, cherry-pick, revert or merge sequence in
// progress in this worktree, or "".
func (r *Repo) InProgress() string {
	for _, p := range []struct{ file, what string }{
		{"rebase-merge", "rebase"}, {"rebase-apply", "rebase"}, {"CHERRY_PICK_HEAD", "cherry-pick"},
		{"REVERT_HEAD", "revert"}, {"sequencer", "sequence"},
	} {
		if exists(r.gitDir + "/" + p.file) {
			return p.what
		}
	}
	return ""
}

// ChangedFiles lists the files changed in the working tree and index
// against HEAD (staged only with staged=true), plus untracked files when
// not staged-only.
func (r *Repo) ChangedFiles(ctx context.Context, staged bool) ([]string, error) {
	args := []string{"diff", "--name-only", "-z", "--no-renames"}
	if staged {
		args = append(args, "--cached")
	}
	args = append(args, "HEAD", "--")
	out, err := r.run(ctx, nil, nil, args...)
	if err != nil {
		return nil, err
	}
	files := splitZ(out)
	if !staged {
		u, err := r.run(ctx, nil, nil, "ls-files", "--others", "--exclude-standard", "-z")
		if err != nil {
			return nil, err
		}
		files = append(files, splitZ(u)...)
	}
	return files, nil
}

func splitZ(s string) []string {
	var out []string
	for _, f := range strings.Split(s, "\x00") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

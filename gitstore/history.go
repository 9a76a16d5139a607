package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"time"
)

// FileChange is one file touched by a commit.
type FileChange struct {
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"` // set for renames
	Deleted bool   `json:"deleted,omitempty"`  // the commit deleted the file
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
	// ExactRenames follows only renames that kept the content, by blob id,
	// without asking git to compare contents (known to be missing here).
	ExactRenames bool
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

// History streams commits with their changed files (renames followed;
// merge commits carry no files), oldest first, so that a consumer storing
// them in arrival order keeps history order even among commits made in the
// same second. Paths are returned verbatim, whatever bytes they hold.
//
// It reads names and blob ids only (git log --raw), never file contents,
// except where git's rename detection compares the blobs of a commit's
// deleted and added files. Where those blobs are missing (a partial clone,
// or a copy without its largest files) it follows only exact renames,
// matched by blob id, and says so: exactRenames is true.
func (r *Repo) History(ctx context.Context, opt LogOptions, fn func(Commit) error) (exactRenames bool, err error) {
	if opt.ExactRenames || r.partialClone() {
		// git would fetch every blob rename detection asks for.
		return true, r.log(ctx, opt, true, fn)
	}
	seen := map[string]bool{}
	err = r.log(ctx, opt, false, func(c Commit) error {
		seen[c.SHA] = true
		return fn(c)
	})
	if !isMissingBlob(err) {
		return false, err
	}
	return true, r.log(ctx, opt, true, func(c Commit) error {
		if seen[c.SHA] {
			return nil
		}
		return fn(c)
	})
}

// partialClone reports whether objects may be missing on purpose here
// (git clone --filter): git fetches a missing blob when asked for it.
func (r *Repo) partialClone() bool {
	c, err := r.st.Config()
	if err != nil {
		return false
	}
	if c.Raw.Section("extensions").Option("partialclone") != "" {
		return true
	}
	for _, rs := range c.Raw.Section("remote").Subsections {
		if rs.Option("promisor") == "true" {
			return true
		}
	}
	return false
}

// isMissingBlob reports whether git failed for want of an object's
// contents.
func isMissingBlob(err error) bool {
	var ge *GitError
	return errors.As(err, &ge) && (strings.Contains(ge.Stderr, "unable to read") || strings.Contains(ge.Stderr, "missing blob"))
}

// log runs git log --raw over opt's commits; exactRenames turns git's
// rename detection off and pairs deleted and added files by blob id.
func (r *Repo) log(ctx context.Context, opt LogOptions, exactRenames bool, fn func(Commit) error) error {
	renames := "-M"
	if exactRenames {
		renames = "--no-renames"
	}
	args := append([]string{"log", "-z", "--raw", "--no-abbrev", renames, "--no-color", "--reverse", "--format=" + logFormat}, opt.revArgs()...)
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
	perr := parseLog(out, exactRenames, fn)
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

func parseLog(r io.Reader, exactRenames bool, fn func(Commit) error) error {
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
		c, err := parseCommit(sc.Bytes(), exactRenames)
		if err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
	}
	return sc.Err()
}

func parseCommit(rec []byte, exactRenames bool) (Commit, error) {
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
	c.Files, err = parseRaw(f[5], exactRenames)
	return c, err
}

// rawChange is one line of git's --raw output.
type rawChange struct {
	status        byte
	oldBlob, blob string
	oldPath, path string
}

// parseRaw reads a commit's -z --raw records (":old-mode new-mode old-blob
// new-blob status NUL path NUL [new-path NUL]"); with exactRenames, a
// deleted and an added file with the same blob are one renamed file.
func parseRaw(b []byte, exactRenames bool) ([]FileChange, error) {
	toks := bytes.Split(bytes.TrimLeft(b, "\x00\n"), []byte{0})
	var changes []rawChange
	for i := 0; i < len(toks); i++ {
		t := bytes.TrimLeft(toks[i], "\n")
		if len(t) == 0 {
			continue
		}
		meta := strings.Fields(string(t))
		if len(meta) != 5 || !strings.HasPrefix(meta[0], ":") || i+1 >= len(toks) {
			return nil, fmt.Errorf("unexpected git log --raw record %q", firstBytes(t, 80))
		}
		ch := rawChange{status: meta[4][0], oldBlob: meta[2], blob: meta[3], path: string(toks[i+1])}
		i++
		if ch.status == 'R' || ch.status == 'C' {
			if i+1 >= len(toks) {
				return nil, fmt.Errorf("unexpected git log --raw rename %q", firstBytes(t, 80))
			}
			ch.oldPath, ch.path = ch.path, string(toks[i+1])
			i++
		}
		changes = append(changes, ch)
	}
	if exactRenames {
		changes = pairExactRenames(changes)
	}
	files := make([]FileChange, 0, len(changes))
	for _, ch := range changes {
		if ch.status == 'C' {
			ch.oldPath = "" // a copy leaves its source where it was
		}
		files = append(files, FileChange{Path: ch.path, OldPath: ch.oldPath, Deleted: ch.status == 'D'})
	}
	return files, nil
}

// pairExactRenames turns each added file whose blob a deleted file of the
// same commit had into a rename of that file (the same base name first),
// as git's own exact rename detection does.
func pairExactRenames(changes []rawChange) []rawChange {
	deleted := map[string][]int{}
	for i, ch := range changes {
		if ch.status == 'D' && strings.Trim(ch.oldBlob, "0") != "" {
			deleted[ch.oldBlob] = append(deleted[ch.oldBlob], i)
		}
	}
	if len(deleted) == 0 {
		return changes
	}
	gone := map[int]bool{}
	for i, ch := range changes {
		cands := deleted[ch.blob]
		if ch.status != 'A' || len(cands) == 0 {
			continue
		}
		k := 0
		for j, d := range cands {
			if path.Base(changes[d].path) == path.Base(ch.path) {
				k = j
				break
			}
		}
		d := cands[k]
		deleted[ch.blob] = append(cands[:k:k], cands[k+1:]...)
		changes[i].status, changes[i].oldPath = 'R', changes[d].path
		gone[d] = true
	}
	out := changes[:0]
	for i, ch := range changes {
		if !gone[i] {
			out = append(out, ch)
		}
	}
	return out
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

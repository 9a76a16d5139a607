package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
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
	Exclude []string // commits (and their ancestors) to leave out; missing ones are ignored
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
	if len(opt.Exclude) > 0 {
		args = append(args, "--ignore-missing")
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
// It reads names and blob ids (git log --raw --no-renames), never file
// contents, and pairs a deleted and an added file with the same blob as a
// rename. Only a commit that still deletes one file and adds another goes
// to git's rename detection, which compares their contents. Where those are
// missing (a partial clone, where git would fetch them, or a copy without
// its largest files) the commit keeps its exact renames only; exactOnly
// counts such commits.
//
// Reading and rename detection run ahead of fn, in their own goroutine and
// git processes, so that a slow consumer (the cache) overlaps with git.
func (r *Repo) History(ctx context.Context, opt LogOptions, fn func(Commit) error) (exactOnly int, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	commits := make(chan Commit, 256)
	var readErr error
	go func() {
		defer close(commits)
		exactOnly, readErr = r.history(ctx, opt, func(c Commit) error {
			select {
			case commits <- c:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	for c := range commits {
		if err = fn(c); err != nil {
			cancel()
			break
		}
	}
	for range commits { // until the reader has stopped
	}
	if err != nil {
		return exactOnly, err
	}
	return exactOnly, readErr
}

// history is History without the read-ahead.
func (r *Repo) history(ctx context.Context, opt LogOptions, fn func(Commit) error) (exactOnly int, err error) {
	partial := r.partialClone()
	var rd *renameDetector
	defer func() { rd.close() }()
	err = r.log(ctx, opt, func(c Commit, changes []rawChange) error {
		changes = pairExactRenames(changes)
		switch {
		case !unpaired(changes):
		case partial:
			exactOnly++
		default:
			if rd == nil {
				var err error
				if rd, err = r.startRenameDetector(ctx); err != nil {
					return err
				}
			}
			got, err := rd.detect(c.SHA)
			if err != nil {
				rd = nil // git has stopped
				if !isMissingBlob(err) {
					return err
				}
				exactOnly++
				break
			}
			changes = got
		}
		c.Files = fileChanges(changes)
		return fn(c)
	})
	return exactOnly, err
}

// partialClone reports whether objects may be missing on purpose here
// (git clone --filter): git fetches a missing blob when asked for it.
func (r *Repo) partialClone() bool {
	c, err := r.local()
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

// log runs git log --raw --no-renames over opt's commits.
func (r *Repo) log(ctx context.Context, opt LogOptions, fn func(Commit, []rawChange) error) error {
	args := append([]string{"log", "-z", "--raw", "--no-abbrev", "--no-renames", "--no-color", "--no-show-signature", "--reverse", "--format=" + logFormat}, opt.revArgs()...)
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

func parseLog(r io.Reader, fn func(Commit, []rawChange) error) error {
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
		c, changes, err := parseCommit(sc.Bytes())
		if err != nil {
			return err
		}
		if err := fn(c, changes); err != nil {
			return err
		}
	}
	return sc.Err()
}

func parseCommit(rec []byte) (Commit, []rawChange, error) {
	f := bytes.SplitN(rec, []byte{0x1f}, 6)
	if len(f) != 6 {
		return Commit{}, nil, fmt.Errorf("unexpected git log record %q", firstBytes(rec, 80))
	}
	ts, err := strconv.ParseInt(string(f[3]), 10, 64)
	if err != nil {
		return Commit{}, nil, fmt.Errorf("unexpected commit time %q", f[3])
	}
	c := Commit{SHA: string(f[0]), Parents: strings.Fields(string(f[1])), Author: string(f[2]), Time: time.Unix(ts, 0).UTC(),
		Message: strings.TrimSpace(string(f[4]))}
	changes, err := parseRaw(f[5])
	return c, changes, err
}

// rawChange is one line of git's --raw output.
type rawChange struct {
	status        byte
	oldBlob, blob string
	oldPath, path string
}

// parseRaw reads a commit's -z --raw records (":old-mode new-mode old-blob
// new-blob status NUL path NUL [new-path NUL]").
func parseRaw(b []byte) ([]rawChange, error) {
	toks := bytes.Split(bytes.TrimLeft(b, "\x00\n"), []byte{0})
	var changes []rawChange
	for i := 0; i < len(toks); i++ {
		t := bytes.TrimLeft(toks[i], "\n")
		if len(t) == 0 {
			continue
		}
		meta := strings.Fields(string(t))
		if len(meta) != 5 || !strings.HasPrefix(meta[0], ":") || i+1 >= len(toks) {
			return nil, fmt.Errorf("unexpected git --raw record %q", firstBytes(t, 80))
		}
		ch := rawChange{status: meta[4][0], oldBlob: meta[2], blob: meta[3], path: string(toks[i+1])}
		i++
		if ch.status == 'R' || ch.status == 'C' {
			if i+1 >= len(toks) {
				return nil, fmt.Errorf("unexpected git --raw rename %q", firstBytes(t, 80))
			}
			ch.oldPath, ch.path = ch.path, string(toks[i+1])
			i++
		}
		changes = append(changes, ch)
	}
	return changes, nil
}

// fileChanges are the files of a commit's changes.
func fileChanges(changes []rawChange) []FileChange {
	files := make([]FileChange, 0, len(changes))
	for _, ch := range changes {
		if ch.status == 'C' {
			ch.oldPath = "" // a copy leaves its source where it was
		}
		files = append(files, FileChange{Path: ch.path, OldPath: ch.oldPath, Deleted: ch.status == 'D'})
	}
	return files
}

// unpaired reports whether changes delete a file and add another, which
// git's rename detection might pair by content.
func unpaired(changes []rawChange) bool {
	var del, add bool
	for _, ch := range changes {
		del = del || ch.status == 'D'
		add = add || ch.status == 'A'
	}
	return del && add
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

// renameDetector is a running git diff-tree --stdin -M, asked about one
// commit at a time.
type renameDetector struct {
	cmd    *exec.Cmd
	args   []string
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
	// marker follows each commit id written: git echoes a line that is
	// not an object id and flushes, which ends the commit's answer.
	marker string
}

func (r *Repo) startRenameDetector(ctx context.Context) (*renameDetector, error) {
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	d := &renameDetector{marker: "--synaptic-" + hex.EncodeToString(nonce[:]) + "--\n"}
	d.args = []string{"diff-tree", "--stdin", "-r", "-z", "--raw", "--no-abbrev", "-M", "--no-color"}
	d.cmd = exec.CommandContext(ctx, "git", append([]string{"--git-dir=" + r.gitDir}, d.args...)...)
	d.cmd.Env = cleanEnv()
	d.cmd.Stderr = &d.stderr
	var err error
	if d.in, err = d.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := d.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	d.out = bufio.NewReaderSize(out, 64<<10)
	return d, nil
}

// detect returns commit sha's changes with renames found by content. After
// an error git has stopped and the detector is done.
func (d *renameDetector) detect(sha string) ([]rawChange, error) {
	if _, err := io.WriteString(d.in, sha+"\n"+d.marker); err != nil {
		return nil, d.fail(err)
	}
	var buf []byte
	for !bytes.Equal(buf, []byte(d.marker)) && !bytes.HasSuffix(buf, []byte("\x00"+d.marker)) {
		line, err := d.out.ReadSlice('\n')
		buf = append(buf, line...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, d.fail(err)
		}
	}
	buf = bytes.TrimSuffix(buf, []byte(d.marker))
	buf = bytes.TrimPrefix(buf, []byte(sha+"\x00")) // the commit's header, when it changed anything
	return parseRaw(buf)
}

// fail ends git and says why it stopped answering.
func (d *renameDetector) fail(err error) error {
	d.in.Close()
	werr := d.cmd.Wait()
	d.cmd = nil
	if werr != nil {
		return &GitError{Args: d.args, Stderr: d.stderr.String(), Err: werr}
	}
	return fmt.Errorf("git diff-tree: %w", err)
}

// close ends git; it may be called on nil and more than once.
func (d *renameDetector) close() {
	if d == nil || d.cmd == nil {
		return
	}
	d.in.Close()
	io.Copy(io.Discard, d.out)
	d.cmd.Wait()
	d.cmd = nil
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
// not staged-only. The two git commands run side by side: each stats the
// working tree, about 3 ms apiece on a real repository.
func (r *Repo) ChangedFiles(ctx context.Context, staged bool) ([]string, error) {
	args := []string{"diff", "--name-only", "-z", "--no-renames"}
	if staged {
		args = append(args, "--cached")
	}
	args = append(args, "HEAD", "--")
	var untracked string
	var uerr error
	done := make(chan struct{})
	if !staged {
		go func() {
			defer close(done)
			untracked, uerr = r.run(ctx, nil, nil, "ls-files", "--others", "--exclude-standard", "-z")
		}()
	} else {
		close(done)
	}
	out, err := r.run(ctx, nil, nil, args...)
	<-done
	if err = errors.Join(err, uerr); err != nil {
		return nil, err
	}
	return append(splitZ(out), splitZ(untracked)...), nil
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

// RootCommits are the commits without parents that HEAD descends from
// (none on an unborn branch). The walk covers the whole history: callers
// bound it with ctx.
func (r *Repo) RootCommits(ctx context.Context) ([]Hash, error) {
	if r.Unborn() {
		return nil, nil
	}
	out, err := r.run(ctx, nil, nil, "rev-list", "--max-parents=0", "HEAD", "--")
	if err != nil {
		return nil, err
	}
	var roots []Hash
	for _, l := range strings.Fields(out) {
		roots = append(roots, NewHash(l))
	}
	return roots, nil
}

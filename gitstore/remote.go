package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrPushRejected is returned when the remote refused a non-fast-forward push.
var ErrPushRejected = errors.New("push rejected: the remote has memory this clone has not merged yet")

// Remotes lists the configured remotes that have a URL (the others
// cannot be fetched from or pushed to), sorted as git remote lists them.
func (r *Repo) Remotes(ctx context.Context) ([]string, error) {
	c, err := r.readConfig(ctx)
	if err != nil {
		return nil, err
	}
	defer c.mu.Unlock()
	return slices.Clone(c.remotes), nil
}

// ConfigGetAll returns every value of a multi-valued config key.
func (r *Repo) ConfigGetAll(ctx context.Context, key string) ([]string, error) {
	if k, ok := sectionKey(key); ok {
		vals, err := r.synapticValues(ctx, k)
		if err != nil {
			return nil, err
		}
		out := make([]string, len(vals))
		for i, v := range vals {
			out[i] = strings.TrimPrefix(v, "\x00") // no value: git prints ""
		}
		return out, nil
	}
	out, err := r.run(ctx, nil, nil, "config", "--get-all", key)
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) == "" {
			return nil, nil // key not set (exit 1)
		}
		return nil, err
	}
	return strings.Split(strings.TrimRight(out, "\n"), "\n"), nil
}

// ConfigAddUnique adds value to a multi-valued key unless it is there;
// it reports whether it added it.
func (r *Repo) ConfigAddUnique(ctx context.Context, key, value string) (bool, error) {
	defer r.ForgetConfig()
	vals, err := r.ConfigGetAll(ctx, key)
	if err != nil {
		return false, err
	}
	for _, v := range vals {
		if v == value {
			return false, nil
		}
	}
	_, err = r.run(ctx, nil, nil, "config", "--add", key, value)
	return err == nil, err
}

// ConfigBool reads key as git reads a boolean (true/yes/on/1, false/no/
// off/0); set is false when the key is absent.
func (r *Repo) ConfigBool(ctx context.Context, key string) (value, set bool, err error) {
	if k, ok := sectionKey(key); ok {
		vals, err := r.synapticValues(ctx, k)
		if err != nil || len(vals) == 0 {
			return false, false, err
		}
		v, err := parseBool(key, vals[len(vals)-1])
		return v, err == nil, err
	}
	out, err := r.run(ctx, nil, nil, "config", "--type=bool", "--get", key)
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) == "" {
			return false, false, nil // not set (exit 1)
		}
		return false, false, err
	}
	return strings.TrimSpace(out) == "true", true, nil
}

// ConfigUnsetValue removes every value of a multi-valued key equal to value.
func (r *Repo) ConfigUnsetValue(ctx context.Context, key, value string) error {
	defer r.ForgetConfig()
	_, err := r.run(ctx, nil, nil, "config", "--unset-all", "--fixed-value", key, value)
	return err
}

// ConfigSet sets a single-valued key; it reports whether the value changed.
func (r *Repo) ConfigSet(ctx context.Context, key, value string) (bool, error) {
	defer r.ForgetConfig()
	vals, err := r.ConfigGetAll(ctx, key)
	if err != nil {
		return false, err
	}
	if len(vals) == 1 && vals[0] == value {
		return false, nil
	}
	_, err = r.run(ctx, nil, nil, "config", key, value)
	return err == nil, err
}

// DefaultNetworkTimeout is how long a fetch or push may go without a
// word from git (its progress included) when the git config
// synaptic.networkTimeout does not say: a server that accepted and went
// silent. A long transfer that makes progress is not cut: the first push
// of a million entries packs for minutes.
const DefaultNetworkTimeout = 2 * time.Minute

// NetworkTimeoutKey is the git config key for the network timeout (a Go
// duration such as 30s, or seconds).
const NetworkTimeoutKey = "synaptic.networkTimeout"

// ErrNetworkTimeout is returned when a fetch or push got no answer in time.
var ErrNetworkTimeout = errors.New("no answer in time")

// networkTimeout is the configured bound on one fetch or push.
func (r *Repo) networkTimeout(ctx context.Context) time.Duration {
	if d, ok := r.ConfigDuration(ctx, NetworkTimeoutKey); ok && d > 0 {
		return d
	}
	return DefaultNetworkTimeout
}

// ConfigDuration reads git config key as a duration: a Go duration such
// as 30s, or whole seconds. ok is false when it is unset, unreadable or
// negative.
func (r *Repo) ConfigDuration(ctx context.Context, key string) (d time.Duration, ok bool) {
	vals, _ := r.ConfigGetAll(ctx, key)
	if len(vals) == 0 {
		return 0, false
	}
	v := strings.TrimSpace(vals[len(vals)-1])
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return d, true
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	return 0, false
}

// network runs git with args (fetch or push, their progress asked for)
// against a remote, stops it when it says nothing for silence (0: the
// network timeout) and works on nothing either, and says so.
func (r *Repo) network(ctx context.Context, silence time.Duration, args ...string) (string, error) {
	d := r.networkTimeout(ctx)
	if silence > 0 {
		d = min(d, silence)
	}
	var pid atomic.Int64
	nctx, heard, stop := watchdog(ctx, d, func() int64 { return int64(pid.Load()) })
	defer stop()
	args = append([]string{args[0], "--progress"}, args[1:]...)
	if w, ok := ctx.Value(transfersKey{}).(io.Writer); ok {
		heard = io.MultiWriter(heard, w)
	}
	out, err := r.runTo(nctx, nil, nil, heard, func(p int) { pid.Store(int64(p)) }, args...)
	if err != nil && ctx.Err() == nil && nctx.Err() != nil {
		return out, fmt.Errorf("%w: nothing within %s (git config %s changes it)", ErrNetworkTimeout, d, NetworkTimeoutKey)
	}
	if ge := (*GitError)(nil); errors.As(err, &ge) {
		ge.Stderr = withoutProgress(ge.Stderr)
	}
	return out, err
}

type transfersKey struct{}

// ShowingTransfers returns a context under which fetches and pushes
// also write git's progress (what it receives, sends and checks) to w: a
// transfer of minutes is not silent to the user waiting on it.
func ShowingTransfers(ctx context.Context, w io.Writer) context.Context {
	return context.WithValue(ctx, transfersKey{}, w)
}

// watchdog returns a context that ends when nothing is written to heard
// for d while the process pid() names (0: none yet) and its children use
// less than a twentieth of a CPU: git is silent for a long while when it
// works alone (a fetch checks that every object of a million entries'
// history arrived, a minute of rev-list at a million entries), and that
// is no stall. After d of silence it watches the CPU for a quarter of d
// more, and ends the context only if it stayed idle. stop ends it (and
// its timer) in any case.
func watchdog(ctx context.Context, d time.Duration, pid func() int64) (context.Context, io.Writer, func()) {
	wctx, cancel := context.WithCancel(ctx)
	var (
		t       *time.Timer
		mu      sync.Mutex
		probing bool  // watching the CPU since base
		base    int64 // CPU ticks when the watch began
	)
	probe := d / 4
	t = time.AfterFunc(d, func() {
		mu.Lock()
		defer mu.Unlock()
		used, ok := int64(0), false
		if p := pid(); p > 0 {
			used, ok = treeCPU(int(p))
		}
		switch {
		case !ok:
			cancel()
		case !probing:
			probing, base = true, used
			t.Reset(probe)
		case float64(used-base) >= probe.Seconds()*clockTicks/20:
			probing = false // working in silence
			t.Reset(d)
		default:
			cancel()
		}
	})
	heard := heardFunc(func() {
		mu.Lock()
		probing = false
		mu.Unlock()
		t.Reset(d)
	})
	return wctx, heard, func() { t.Stop(); cancel() }
}

// clockTicks is the unit of the CPU times /proc gives (USER_HZ).
const clockTicks = 100

// heardFunc is a writer that calls itself on every write.
type heardFunc func()

func (f heardFunc) Write(p []byte) (int, error) {
	f()
	return len(p), nil
}

// withoutProgress drops git's progress lines (those it redraws with a
// carriage return) from its standard error.
func withoutProgress(stderr string) string {
	var keep []string
	for _, line := range strings.Split(stderr, "\n") {
		if i := strings.LastIndexByte(line, '\r'); i >= 0 {
			line = line[i+1:]
		}
		if line != "" && !progressLine(line) {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// progressLine reports a line of git's transfer progress.
func progressLine(line string) bool {
	line = strings.TrimPrefix(line, "remote: ")
	for _, p := range []string{"Enumerating objects", "Counting objects", "Compressing objects", "Writing objects", "Total ", "Delta compression", "Receiving objects", "Resolving deltas", "Unpacking objects"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// Fetch runs git fetch with explicit refspecs. It is stopped when git says
// nothing (its progress included) for silence, or for the network timeout
// when silence is 0 or longer: a transfer that makes progress is never
// cut.
func (r *Repo) Fetch(ctx context.Context, remote string, silence time.Duration, refspecs ...string) error {
	// --prune drops the tracking refs of what the remote no longer holds
	// (only those the refspecs name): after git remote set-url they must
	// not stand for what the new address holds.
	args := append([]string{"fetch", "--prune", "--no-tags", "--no-write-fetch-head", "--quiet", remote}, refspecs...)
	if _, err := r.network(ctx, silence, args...); err != nil {
		return fmt.Errorf("fetch memory from %s: %w", remote, err)
	}
	// go-git lists pack files once; a fetch may have added one.
	r.st.rescan()
	return nil
}

// Push pushes refspecs to remote (options such as --force-with-lease may
// lead them). It skips the pre-push hook: it runs from it. It returns
// ErrPushRejected when the remote moved ahead or another push held the ref.
func (r *Repo) Push(ctx context.Context, remote string, refspecs ...string) error {
	args := append([]string{"push", "--quiet", "--porcelain", "--no-verify", remote}, refspecs...)
	out, err := r.network(ctx, 0, args...)
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && rejected(out+ge.Stderr) {
			return fmt.Errorf("%w (%s)", ErrPushRejected, remote)
		}
		return fmt.Errorf("push memory to %s: %w", remote, err)
	}
	return nil
}

// rejectedPhrases are how git push says the remote moved on, or that
// another push held the ref: both are worth a fetch, merge and retry.
var rejectedPhrases = []string{"[rejected]", "fetch first", "non-fast-forward", "cannot lock ref", "failed to update ref"}

func rejected(msg string) bool {
	for _, p := range rejectedPhrases {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// AheadBehind counts commits in a not in b, and in b not in a.
func (r *Repo) AheadBehind(ctx context.Context, a, b Hash) (ahead, behind int, err error) {
	switch {
	case a.IsZero() && b.IsZero():
		return 0, 0, nil
	case a.IsZero():
		n, err := r.count(ctx, b.String())
		return 0, n, err
	case b.IsZero():
		n, err := r.count(ctx, a.String())
		return n, 0, err
	}
	out, err := r.run(ctx, nil, nil, "rev-list", "--left-right", "--count", a.String()+"..."+b.String())
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(out)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("rev-list: unexpected output %q", out)
	}
	ahead, _ = strconv.Atoi(f[0])
	behind, _ = strconv.Atoi(f[1])
	return ahead, behind, nil
}

func (r *Repo) count(ctx context.Context, rev string) (int, error) {
	out, err := r.run(ctx, nil, nil, "rev-list", "--count", rev)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}

// ResolveCommit turns a commit-ish (sha prefix, branch, HEAD~2) into a commit id.
func (r *Repo) ResolveCommit(ctx context.Context, rev string) (Hash, error) {
	if strings.HasPrefix(rev, "-") {
		return ZeroHash, fmt.Errorf("bad revision %q", rev)
	}
	out, err := r.run(ctx, nil, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return ZeroHash, fmt.Errorf("%q is not a commit in this repository", rev)
	}
	return plumbingHash(strings.TrimSpace(out))
}

// NotesRef is where commit-attached memory lives.
const NotesRef = "refs/notes/synaptic"

// identityEnv supplies a committer for git commands that commit (notes) when
// the user has none configured, so memory writes never fail on it.
func (r *Repo) identityEnv(ctx context.Context) []string {
	if _, err := r.run(ctx, nil, nil, "var", "GIT_COMMITTER_IDENT"); err == nil {
		return nil
	}
	host, _ := os.Hostname()
	return []string{"GIT_COMMITTER_NAME=git-synaptic", "GIT_COMMITTER_EMAIL=git-synaptic@" + host, "GIT_AUTHOR_NAME=git-synaptic", "GIT_AUTHOR_EMAIL=git-synaptic@" + host}
}

// ExpireReflogs drops every reflog entry of the refs, so that what a
// rewrite removed from their history is no longer reachable through them.
func (r *Repo) ExpireReflogs(ctx context.Context, refs ...string) error {
	var logged []string // git refuses refs that have no reflog
	for _, ref := range refs {
		if s, err := r.side(ref, false); err != nil || s != r {
			if err == nil && s != nil {
				err = s.ExpireReflogs(ctx, ref)
			}
			if err != nil {
				return err
			}
			continue
		}
		if exists(filepath.Join(r.commonDir, "logs", filepath.FromSlash(ref))) {
			logged = append(logged, ref)
		}
	}
	if len(logged) == 0 {
		return nil
	}
	args := append([]string{"reflog", "expire", "--expire=all", "--expire-unreachable=all", "--"}, logged...)
	_, err := r.run(ctx, nil, nil, args...)
	return err
}

// NoteSize is the size in bytes of the synaptic note of commit c (0 when
// it has none).
func (r *Repo) NoteSize(ctx context.Context, c Hash) (int64, error) {
	out, err := r.run(ctx, nil, nil, "notes", "--ref="+NotesRef, "list", c.String())
	if err != nil {
		return 0, nil // no note
	}
	h, err := plumbingHash(strings.TrimSpace(out))
	if err != nil {
		return 0, err
	}
	return r.st.EncodedObjectSize(h)
}

// AppendNote appends text to the synaptic note of commit c (creating it),
// retrying while another process holds the notes ref.
func (r *Repo) AppendNote(ctx context.Context, c Hash, text string) error {
	env := r.identityEnv(ctx)
	return casRetry(ctx, "update "+NotesRef, func() error {
		_, err := r.run(ctx, []byte(text), env, "notes", "--ref="+NotesRef, "append", "-F", "-", c.String())
		if err != nil && strings.Contains(err.Error(), "lock") {
			r.RemoveStaleLocks(NotesRef)
			return fmt.Errorf("%w: %v", ErrConflict, err)
		}
		return err
	})
}

// MergeNotes merges a notes commit (e.g. fetched from a remote) into the
// local notes ref, concatenating differing notes on the same commit and
// dropping duplicate lines (git's cat_sort_uniq strategy).
func (r *Repo) MergeNotes(ctx context.Context, theirs Hash) (MergeResult, error) {
	if _, err := r.CommitTree(theirs); err != nil {
		return "", err
	}
	ours, err := r.Tip(NotesRef)
	if err != nil {
		return "", err
	}
	if ours.IsZero() {
		return MergeCreated, r.CompareAndSwap(ctx, NotesRef, theirs, ours)
	}
	if ok, err := r.IsAncestor(ctx, theirs, ours); err != nil || ok {
		return MergeUpToDate, err
	}
	env := r.identityEnv(ctx)
	err = casRetry(ctx, "merge "+NotesRef, func() error {
		_, err := r.run(ctx, nil, env, "notes", "--ref="+NotesRef, "merge", "--quiet", "-s", "cat_sort_uniq", theirs.String())
		if err != nil && strings.Contains(err.Error(), "lock") {
			return fmt.Errorf("%w: %v", ErrConflict, err)
		}
		return err
	})
	return MergeUnion, err
}

func plumbingHash(s string) (Hash, error) {
	if len(s) != 40 {
		return ZeroHash, fmt.Errorf("bad object id %q", s)
	}
	var h Hash
	for i := 0; i < 20; i++ {
		v, err := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		if err != nil {
			return ZeroHash, fmt.Errorf("bad object id %q", s)
		}
		h[i] = byte(v)
	}
	return h, nil
}

// DropStaleNote removes the synaptic note of commit old when no branch,
// tag or remote-tracking ref contains old any more (it was rewritten, and
// git has copied the note to the new commit). It reports whether it did.
func (r *Repo) DropStaleNote(ctx context.Context, old string) (bool, error) {
	if _, err := r.run(ctx, nil, nil, "notes", "--ref="+NotesRef, "list", old); err != nil {
		return false, nil // no note there
	}
	out, err := r.run(ctx, nil, nil, "for-each-ref", "--count=1", "--contains", old, "refs/heads", "refs/tags", "refs/remotes")
	if err != nil || strings.TrimSpace(out) != "" {
		return false, err
	}
	env := r.identityEnv(ctx)
	_, err = r.run(ctx, nil, env, "notes", "--ref="+NotesRef, "remove", "--ignore-missing", old)
	return err == nil, err
}

// ConfigSubsections lists the subsections of section that set key (for
// section "remote" and key "url": the remote names), with key's value.
func (r *Repo) ConfigSubsections(ctx context.Context, section, key string) (map[string]string, error) {
	out, err := r.run(ctx, nil, nil, "config", "-z", "--get-regexp", `^`+regexp.QuoteMeta(section)+`\..*\.`+regexp.QuoteMeta(key)+`$`)
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) == "" {
			return map[string]string{}, nil // none set (exit 1)
		}
		return nil, err
	}
	subs := map[string]string{}
	for _, rec := range strings.Split(out, "\x00") {
		name, value, _ := strings.Cut(rec, "\n")
		name = strings.TrimPrefix(name, section+".")
		name = strings.TrimSuffix(name, "."+key)
		if rec != "" {
			subs[name] = value
		}
	}
	return subs, nil
}

// ConfigRemoveSection removes a config section and every key in it
// (section "remote.origin": the whole remote).
func (r *Repo) ConfigRemoveSection(ctx context.Context, section string) error {
	defer r.ForgetConfig()
	_, err := r.run(ctx, nil, nil, "config", "--remove-section", section)
	return err
}

// Mirror fetches refspecs from url (a URL or a path, not a configured
// remote) and prunes the local refs they map to that url no longer has.
func (r *Repo) Mirror(ctx context.Context, url string, refspecs ...string) error {
	if strings.HasPrefix(url, "-") {
		return fmt.Errorf("%q is not a repository URL", url)
	}
	args := append([]string{"fetch", "--no-tags", "--no-write-fetch-head", "--quiet", "--prune", "--", url}, refspecs...)
	if _, err := r.network(ctx, 0, args...); err != nil {
		return fmt.Errorf("fetch memory from %s: %w", url, err)
	}
	r.st.rescan()
	return nil
}

// DeleteRef deletes ref; a ref that does not exist is not an error.
func (r *Repo) DeleteRef(ctx context.Context, ref string) error {
	if !strings.HasPrefix(ref, "refs/") {
		return fmt.Errorf("refusing to delete %q: not a ref name", ref)
	}
	if s, err := r.side(ref, false); err != nil || s == nil {
		return err
	} else if s != r {
		return s.DeleteRef(ctx, ref)
	}
	_, err := r.run(ctx, nil, nil, "update-ref", "-d", ref)
	return err
}

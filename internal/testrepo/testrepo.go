// Package testrepo makes real git repositories in temporary directories for
// tests: a working repository, clones sharing a bare remote, and a helper
// to run git in them. Nothing is mocked.
package testrepo

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Isolate points HOME at an empty directory with a known git identity and
// ignores system config, so tests never read or write the user's settings.
// Call it from TestMain; it returns a cleanup function.
func Isolate() (cleanup func()) {
	home, err := os.MkdirTemp("", "synaptic-home")
	if err != nil {
		panic(err)
	}
	cfg := "[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg), 0o644); err != nil {
		panic(err)
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	// No project list: each test that needs one names its own, so that
	// tests never see each other's repositories as "other projects".
	os.Setenv("GIT_SYNAPTIC_PROJECTS", "off")
	// No warm process unless a test asks for one (and stops it): commands
	// run in place, and any daemon lives under this home.
	os.Setenv("GIT_SYNAPTIC_DAEMON", "off")
	os.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "run"))
	if err := os.Mkdir(filepath.Join(home, "run"), 0o700); err != nil {
		panic(err)
	}
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, v := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_CONFIG_GLOBAL", "GIT_PAGER", "PAGER", "GIT_SYNAPTIC_SESSION", "GIT_SYNAPTIC_AGENT"} {
		os.Unsetenv(v)
	}
	return func() { os.RemoveAll(home) }
}

// Main is a test package's TestMain that needs nothing but Isolate: it
// runs the tests isolated and exits with their code.
func Main(m *testing.M) {
	cleanup := Isolate()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// Git runs git in dir and returns its trimmed stdout, failing the test on error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, msg)
	}
	return strings.TrimSpace(string(out))
}

// GitStdin runs git in dir with stdin and returns its trimmed stdout.
func GitStdin(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return strings.TrimSpace(string(out))
}

// NewRepo creates a repository with one commit, its history its own, and
// returns its path.
func NewRepo(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	Git(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	// Its own content: two repositories made in the same second would
	// otherwise have one root commit, one history.
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("test "+dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "add", "README")
	Git(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

// NewReposAndRemote creates a bare remote and n clones of it (each with the
// remote as origin and the initial commit pushed). It returns the clones'
// paths and the remote's path.
func NewReposAndRemote(t testing.TB, n int) (clones []string, remote string) {
	t.Helper()
	root := t.TempDir()
	remote = filepath.Join(root, "remote.git")
	Git(t, root, "init", "-q", "--bare", "-b", "main", remote)
	first := NewRepo(t)
	Git(t, first, "remote", "add", "origin", remote)
	Git(t, first, "push", "-q", "origin", "main")
	for i := 0; i < n; i++ {
		dir := filepath.Join(root, "clone"+string(rune('a'+i)))
		Git(t, root, "clone", "-q", remote, dir)
		clones = append(clones, dir)
	}
	return clones, remote
}

// BuildBinary builds git-synaptic as make build does into dir: the small
// cmd/git-synaptic (without cgo), and beside it the whole program
// cmd/git-synaptic-core and the MCP server cmd/git-synaptic-mcp (with the
// build tags the project needs); it returns the path of git-synaptic.
// moduleRoot is the repository root. Call it before Isolate: the build
// needs the real HOME's Go caches.
func BuildBinary(moduleRoot, dir string) (string, error) {
	for _, name := range []string{"git-synaptic-mcp", "git-synaptic-core"} {
		if _, err := BuildCommand(moduleRoot, dir, "./cmd/"+name, name); err != nil {
			return "", err
		}
	}
	return build(moduleRoot, dir, "./cmd/git-synaptic", "git-synaptic", "CGO_ENABLED=0")
}

// BuildCommand builds the main package pkg into dir/name.
func BuildCommand(moduleRoot, dir, pkg, name string) (string, error) {
	return build(moduleRoot, dir, pkg, name)
}

// build builds pkg into dir/name with env added to this process's.
func build(moduleRoot, dir, pkg, name string, env ...string) (string, error) {
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-tags", "sqlite_fts5", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg)
	cmd.Dir, cmd.Env = moduleRoot, append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return bin, cmd.Run()
}

// Ran is what one run of a binary printed, its exit status and how long
// it took.
type Ran struct {
	Out, Err string
	Code     int
	Took     time.Duration
}

// RunBinary runs bin with args in dir, with stdin and env added to this
// process's environment. err is set only when bin could not run; a
// non-zero exit is Code.
func RunBinary(bin, dir, stdin string, env []string, args ...string) (Ran, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := Ran{Took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code, err = ee.ExitCode(), nil
	}
	r.Out, r.Err = out.String(), errb.String()
	return r, err
}

// ShellRemote is a URL of git's ext:: transport (git-remote-ext(1), to
// be allowed with protocol.ext.allow) that serves the bare repository
// remote after the shell command before has run: a remote that is slow,
// silent or talkative. In ext::, a space is "% " and a percent sign "%%";
// %S is the service git asks for (git-upload-pack, git-receive-pack).
func ShellRemote(before, remote string) string {
	escape := strings.NewReplacer("%", "%%", " ", "% ").Replace
	return "ext::sh -c " + escape(before+"; exec ") + "%S" + escape(" "+remote)
}

// RunningGC writes gitDir/gc.pid as a git gc running on this host would,
// for a process that runs for d, and returns when that process ended, on
// a channel that receives once it has. A write beside it waits for it as
// for a real gc.
func RunningGC(t testing.TB, gitDir string, d time.Duration) <-chan time.Time {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	gc := exec.Command("sleep", strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
	if err := gc.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan time.Time, 1)
	go func() {
		gc.Wait()
		ended <- time.Now()
	}()
	t.Cleanup(func() { gc.Process.Kill() })
	if err := os.WriteFile(filepath.Join(gitDir, "gc.pid"), []byte(fmt.Sprintf("%d %s", gc.Process.Pid, host)), 0o644); err != nil {
		t.Fatal(err)
	}
	return ended
}

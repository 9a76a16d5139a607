// Package forward is the git-synaptic command itself: a small program
// that hands searches, saves and agent hooks to the warm process (package
// daemon) and runs every other command, and whatever the warm process
// does not take, in git-synaptic-core, the whole program, installed
// beside it.
//
// It exists for its start: the whole program links SQLite, ONNX
// Runtime's loader, go-git and the web view, and starting it costs about
// 8 ms (page faults and package initialisers) before it does anything,
// while this one starts in about 3 ms. An agent's prompt hook, a save and
// a search each pay that on every call.
package forward

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/git-synaptic/git-synaptic/internal/daemon"
	"github.com/git-synaptic/git-synaptic/internal/datadir"
	"github.com/git-synaptic/git-synaptic/internal/sibling"
)

// CoreProgram is the whole program, installed beside git-synaptic.
const CoreProgram = "git-synaptic-core"

// Exit codes of this program's own (config.ExitFailure and as a shell
// reports a signal); the rest are the command's.
const (
	exitFailure     = 1
	exitInterrupted = 130
	exitTerminated  = 143
)

// Candidate reports whether a command line may go to the warm process,
// which decides (it knows the commands' flags, see Server.Prepare):
// searches, saves and hooks.
func Candidate(args []string) bool {
	return len(args) >= 1 && (args[0] == "search" || args[0] == "save") || len(args) >= 2 && args[0] == "hook"
}

// GitHandoff reports whether a command line is a git hook that hands its
// work to the warm process and never does it in place (the next
// command's catch-up does).
func GitHandoff(args []string) bool {
	return len(args) >= 2 && args[0] == "hook" && (args[1] == "post-commit" || args[1] == "post-merge")
}

// Main runs the command line in os.Args and returns its exit code (it
// does not return when the command runs in git-synaptic-core in place).
func Main() int {
	core, err := Core()
	if err != nil {
		fmt.Fprintln(os.Stderr, "git-synaptic:", err)
		return exitFailure
	}
	args := os.Args[1:]
	if GitHandoff(args) {
		// git waits for nothing here: hand over to the warm process
		// (it runs the hook once free), else leave the commits to the
		// next command
		if !daemon.Off() {
			if req, path, err := request(core, args); err == nil {
				daemon.Notify(context.Background(), path, req)
			}
		}
		return 0
	}
	if Candidate(args) && !daemon.Off() {
		// an interrupt ends the wait (the warm process finishes what it
		// began, as a command killed in place may have); a wait that
		// cannot see it (a read of standard input) ends signalGrace later
		ctx, cancel := context.WithCancel(context.Background())
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		var got os.Signal
		done, finished := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			select {
			case got = <-sig:
				cancel()
				select {
				case <-finished:
				case <-time.After(signalGrace):
					os.Exit(signalCode(got))
				}
			case <-ctx.Done():
			}
		}()
		ran, err := viaDaemon(ctx, core, args)
		close(finished)
		cancel()
		<-done
		signal.Stop(sig)
		switch {
		case got != nil:
			return signalCode(got)
		case err == nil:
			os.Stdout.Write(ran.Stdout)
			os.Stderr.Write(ran.Stderr)
			return ran.Code
		}
		// in place, as it was planned: a save the daemon may have done
		// before it died (ErrLost) is found under its id, not saved twice
		if ran.Plan.Args != nil {
			args = ran.Plan.Args
		}
		if ran.StdinRead {
			return runCore(core, args, ran.Stdin)
		}
	}
	return execCore(core, args)
}

// signalGrace is how long a wait for the warm process may go on after an
// interrupt or SIGTERM (the whole program's too).
const signalGrace = 2 * time.Second

// signalCode is the exit status after sig, as a shell reports it.
func signalCode(sig os.Signal) int {
	if sig == syscall.SIGTERM {
		return exitTerminated
	}
	return exitInterrupted
}

// viaDaemon asks the warm process of core to run args, starting one when
// none answers.
func viaDaemon(ctx context.Context, core string, args []string) (daemon.Ran, error) {
	req, path, err := request(core, args)
	if err != nil {
		return daemon.Ran{}, err
	}
	req.TTY, req.StdinTTY = term.IsTerminal(int(os.Stdout.Fd())), term.IsTerminal(int(os.Stdin.Fd()))
	ran, err := daemon.Call(ctx, path, req, os.Stdin)
	if errors.Is(err, daemon.ErrUnavailable) {
		startDaemon(core)
	}
	return ran, err
}

// request is args as a request to core's warm process, and its socket.
func request(core string, args []string) (daemon.Request, string, error) {
	dir, err := daemon.SocketDir()
	if err != nil {
		return daemon.Request{}, "", err
	}
	key, err := daemon.Key(core)
	if err != nil {
		return daemon.Request{}, "", err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return daemon.Request{}, "", err
	}
	return daemon.Request{Args: args, Dir: cwd, Env: os.Environ()}, daemon.SocketPath(dir, key), nil
}

// Core is the path of git-synaptic-core (Beside), its links resolved, as
// the warm process it runs names itself (its daemon.Key).
func Core() (string, error) {
	p, err := Beside(CoreProgram)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Abs(p)
}

// Beside is the path of program, one of git-synaptic's, installed beside
// the program running, else on PATH.
func Beside(program string) (string, error) {
	p, err := sibling.Path(program)
	if err != nil {
		return "", fmt.Errorf("%s not found beside git-synaptic or on PATH; reinstall with ./install.sh (make install)", program)
	}
	return p, nil
}

// execCore runs args in core in place of this process.
func execCore(core string, args []string) int {
	err := syscall.Exec(core, append([]string{"git-synaptic"}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "git-synaptic: run %s: %v\n", core, err)
	return exitFailure
}

// runCore runs args in core with stdin, the standard input this process
// has already read, and returns its exit code. Signals this process gets
// go to it.
func runCore(core string, args []string, stdin []byte) int {
	cmd := exec.Command(core, args...)
	cmd.Args[0] = "git-synaptic"
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "git-synaptic: run %s: %v\n", core, err)
		return exitFailure
	}
	done := make(chan struct{})
	passed := make(chan struct{})
	go func() {
		defer close(passed)
		for {
			select {
			case s := <-sig:
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	<-passed
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "git-synaptic: %s: %v\n", core, err)
	return exitFailure
}

// startDaemon starts `git-synaptic-core daemon run` detached, unless git
// config synaptic.daemon is false here or no embedding model is
// installed (nothing to keep warm); it does not wait for it.
func startDaemon(core string) {
	model := os.Getenv("GIT_SYNAPTIC_MODEL")
	if model == "" {
		model = datadir.DefaultModel
	}
	if _, err := os.Stat(datadir.Manifest(model)); err != nil {
		return
	}
	if gitConfig("--type=bool", "synaptic.daemon") == "false" {
		return
	}
	args := []string{"daemon", "run"}
	if idle := gitConfig("synaptic.daemonIdle"); idle != "" {
		args = append(args, "--idle", idle)
	}
	cmd := exec.Command(core, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlives this command, as git gc --auto does
	restore := InheritOnlyStdio()                        // (started from a git hook, it must not hold git's pipes)
	cmd.Start()                                          // reaped by init once this process (or the command it becomes) ends
	restore()                                            // the command run in place keeps what it inherited
}

// gitConfig is git config --get's answer here ("" when unset or on error).
func gitConfig(args ...string) string {
	out, err := exec.Command("git", append([]string{"config", "--get"}, args...)...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// InheritOnlyStdio marks every file this process inherited beyond its
// standard input, output and error close-on-exec, so that a process it
// leaves running (the warm process, a sync a pre-push hook starts) does
// not hold them. A hook inherits git's: holding the pipe to a remote
// helper, a sync left running in the background kept git push waiting
// for it. restore clears the mark it set, for a process that goes on to
// run another in its place (this one, git-synaptic-core).
func InheritOnlyStdio() (restore func()) {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		fds, _ = os.ReadDir("/dev/fd")
	}
	var marked []int
	for _, f := range fds {
		fd, err := strconv.Atoi(f.Name())
		if err != nil || fd <= 2 {
			continue
		}
		if flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0); errno == 0 && flags&syscall.FD_CLOEXEC == 0 {
			syscall.CloseOnExec(fd)
			marked = append(marked, fd)
		}
	}
	return func() {
		for _, fd := range marked {
			syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFD, 0)
		}
	}
}

package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/frontend/forward"
)

// pushLog is the file, beside the cache, that holds the
// output of the last sync the pre-push hook started; its lock says one
// is still running.
const pushLog = "push.log"

// prePush is the pre-push hook's work: when memory is due to go to the
// remote (app.Sharing.PushDue), a sync in a process of its own, waited
// for at most synaptic.prePushWait and left running past that.
func prePush(e *env, args []string) error {
	if len(args) == 0 {
		return nil
	}
	remote := args[0]
	var due bool
	var log string
	var wait time.Duration
	err := e.withService(func(s *app.Service) error {
		var err error
		due, err = s.Sharing().PushDue(contextOf(e), remote)
		// beside the cache, shared by every worktree, as memory is
		log = filepath.Join(filepath.Dir(s.CachePath()), pushLog)
		wait = s.Sharing().PrePushWait(contextOf(e))
		return err
	})
	if err != nil || !due {
		return err
	}
	return syncAside(e, remote, log, wait)
}

// errPushing says a sync the pre-push hook started earlier still runs.
var errPushing = errors.New("a memory push started by an earlier git push is still running")

// syncAside runs git synaptic sync REMOTE in a process of its own, its
// output in log, which it holds locked while it runs (so a second is not
// started beside it). It waits for it at most wait; then the sync goes on
// after this process ends, and the user is told so.
func syncAside(e *env, remote, log string, wait time.Duration) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(log), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	// the lock belongs to the open file, which the child shares: it holds
	// it until it ends, whatever happens to this process
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("%w (its output: %s)", errPushing, log)
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	cmd := exec.Command(exe, "sync", "--", remote)
	cmd.Dir = e.dir
	forward.InheritOnlyStdio()
	cmd.Stdout, cmd.Stderr = f, f // not git's: git would wait for them
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }() // ends with the sync, or with this process
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s (its output: %s)", lastLine(log), log)
		}
		return nil
	case <-time.After(wait):
		fmt.Fprintf(e.io.Err, "git-synaptic: memory is still being pushed to %s; it goes on in the background (its output: %s).\n", remote, log)
		return nil
	}
}

// lastLine returns the last line of the file at path that says something.
func lastLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimPrefix(lines[len(lines)-1], "git-synaptic: ")
}

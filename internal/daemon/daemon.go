// Package daemon is git-synaptic's warm process, kept the way git keeps
// its own (credential-cache--daemon, fsmonitor--daemon): one process per
// user and binary, started on demand, listening on a unix socket in a
// directory only the user can open, exiting after an idle time. It holds
// what is costly to start (ONNX Runtime and the embedding model) for the
// commands that run on every prompt; it knows nothing of them. A Handler
// runs each request, one at a time.
//
// A client that finds no daemon, a busy one, or one that dies under its
// request runs the command itself: the daemon only ever saves time.
package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Request is one command, run as the client would run it: its arguments,
// working directory, environment and standard input.
type Request struct {
	Args []string `json:"args"`
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`
	// Stdin is what the client read from its standard input, as the
	// Plan asked (the Handler's; the client sends it after the plan).
	Stdin []byte `json:"-"`
	TTY   bool   `json:"tty,omitempty"` // the client's stdout is a terminal
	// StdinTTY: the client's standard input is a terminal (someone may
	// type the content there: not for the daemon to read).
	StdinTTY bool `json:"stdin_tty,omitempty"`
	// Control, instead of a command: "status" or "stop".
	Control string `json:"control,omitempty"`
	// NoWait: the client does not wait for it to run (Notify).
	NoWait bool `json:"no_wait,omitempty"`
}

// Response is what the command printed and its exit code.
type Response struct {
	Code   int    `json:"code"`
	Stdout []byte `json:"stdout,omitempty"`
	Stderr []byte `json:"stderr,omitempty"`
	// Declined, when set, says why the daemon did not run the command
	// (the client runs it itself).
	Declined string  `json:"declined,omitempty"`
	Status   *Status `json:"status,omitempty"`
}

// Plan is how the daemon will run a request, said before the request
// waits for its turn: the command line it runs, which the client runs
// in place should the daemon die under it (a save carries the id it is
// saved under, so that it is saved once), and how much of the client's
// standard input to send (0: none).
type Plan struct {
	Args  []string `json:"args"`
	Stdin int64    `json:"stdin,omitempty"`
}

// input is the client's standard input, as the plan asked.
type input struct {
	Stdin []byte `json:"stdin,omitempty"`
}

// Status describes a running daemon.
type Status struct {
	PID      int    `json:"pid"`
	Version  string `json:"version"`
	Socket   string `json:"socket"`
	Started  string `json:"started"`
	Requests int    `json:"requests"`
	IdleExit string `json:"idle_exit"` // the idle time after which it exits
}

// ErrUnsafe is returned when the socket directory is not private to this
// user: no daemon is started or trusted there.
var ErrUnsafe = errors.New("daemon directory is not private")

// SocketDir is the private directory holding the sockets:
// $XDG_RUNTIME_DIR/git-synaptic, else git-synaptic-UID in the temporary
// directory. It is created with mode 0700 and refused (ErrUnsafe) when it
// belongs to another user or others can open it.
func SocketDir() (string, error) {
	dir := filepath.Join(os.TempDir(), "git-synaptic-"+strconv.Itoa(os.Getuid()))
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" && filepath.IsAbs(rt) {
		dir = filepath.Join(rt, "git-synaptic")
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("daemon directory: %w", err)
	}
	return dir, checkPrivate(dir)
}

// checkPrivate refuses a directory that is a link, another user's, or
// open to the group or others.
func checkPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("daemon directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafe, dir)
	case ok && int(st.Uid) != os.Getuid():
		return fmt.Errorf("%w: %s belongs to uid %d", ErrUnsafe, dir, st.Uid)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%w: %s has mode %o (want 0700)", ErrUnsafe, dir, fi.Mode().Perm())
	}
	return nil
}

// Key names the daemon of the program at exe, the one that serves: its
// path, size and time, so that a rebuilt or upgraded program never talks
// to a daemon of another.
func Key(exe string) (string, error) {
	fi, err := os.Stat(exe)
	if err != nil {
		return "", fmt.Errorf("daemon key: %w", err)
	}
	h := sha256.New()
	fmt.Fprintln(h, exe, fi.Size(), fi.ModTime().UnixNano())
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// Off reports whether the environment turns the warm process off
// (GIT_SYNAPTIC_DAEMON=off; git config synaptic.daemon false is the
// daemon's to check, per repository).
func Off() bool { return os.Getenv("GIT_SYNAPTIC_DAEMON") == "off" }

// SocketPath is the socket of the daemon with key in dir.
func SocketPath(dir, key string) string { return filepath.Join(dir, "daemon-"+key+".sock") }

//go:build unix

package main

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func nonblocking(t *testing.T, fd int) bool {
	t.Helper()
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if errno != 0 {
		t.Fatalf("fcntl: %v", errno)
	}
	return flags&syscall.O_NONBLOCK != 0
}

// A pipe, as an MCP client gives its server for stdin, is read through
// the runtime's poller: a read takes a deadline, and what is written
// arrives; restore makes the descriptor blocking again.
func TestPollableStdinPipe(t *testing.T) {
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	w := os.NewFile(uintptr(p[1]), "pipe writer")
	defer w.Close()
	f, restore := pollable(p[0], "pipe reader")
	if f == nil {
		t.Fatal("a pipe was not made pollable")
	}
	defer f.Close()
	if err := f.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatalf("the pipe's File takes no deadline (not on the poller): %v", err)
	}
	buf := make([]byte, 8)
	if _, err := f.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read of an empty pipe: %v, want the deadline's error", err)
	}
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if n, err := f.Read(buf); err != nil || string(buf[:n]) != "{}\n" {
		t.Fatalf("read %q, %v; want the line written", buf[:n], err)
	}
	if !nonblocking(t, p[0]) {
		t.Fatal("the pipe is blocking while read through the poller")
	}
	restore()
	if nonblocking(t, p[0]) {
		t.Fatal("restore left the pipe non-blocking")
	}
}

// A regular file (stdin redirected from one) is left as it is.
func TestPollableStdinFile(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "requests"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	fd := int(file.Fd())
	if f, _ := pollable(fd, file.Name()); f != nil {
		t.Fatal("a regular file was made pollable")
	}
	if nonblocking(t, fd) {
		t.Fatal("a regular file was made non-blocking")
	}
}

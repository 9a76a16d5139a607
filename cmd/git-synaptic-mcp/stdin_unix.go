//go:build unix

package main

import (
	"os"
	"syscall"
)

// pollable returns the descriptor fd (named name) as a File whose reads
// wait on the runtime's poller, when it is a pipe or a socket, as an MCP
// client gives its server; else (a terminal, a file, an error) it returns
// nil. restore puts the descriptor back in blocking mode.
//
// A read of a blocking descriptor holds its thread, and the thread holds
// one of the runtime's Ps while it waits, until sysmon takes the P back:
// up to 10 ms after an idle spell. On two cores the MCP server's reader
// of stdin, waiting for the next request, held one of the two, and the
// goroutine a save starts for its embedding waited for it: it began 1.5
// to 2.7 ms into an MCP save at a million entries, after the vector
// search's plan, where with a third P it began at 0.1 ms (traced,
// medians of 60 saves).
func pollable(fd int, name string) (f *os.File, restore func()) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, nil
	}
	if kind := st.Mode & syscall.S_IFMT; kind != syscall.S_IFIFO && kind != syscall.S_IFSOCK {
		return nil, nil
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		return nil, nil
	}
	// NewFile makes a File of a descriptor in non-blocking mode pollable
	return os.NewFile(uintptr(fd), name), func() { _ = syscall.SetNonblock(fd, false) }
}

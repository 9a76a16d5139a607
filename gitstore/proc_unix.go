//go:build unix

package gitstore

import (
	"errors"
	"syscall"
)

// processExists reports whether a process with pid exists (signal 0:
// checked, not sent; a process of another user exists too).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Package lockfile serialises processes on a lock file with flock, which
// the kernel releases when the process dies: a killed holder leaves no
// lock behind.
package lockfile

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Lock waits for the exclusive lock on path (created, with its folder,
// when missing) and returns its release.
func Lock(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

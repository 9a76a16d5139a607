// Package regular opens files that must be regular files: a transcript,
// a project registry, a settings file. Opening a FIFO blocks until a
// writer appears, so a FIFO put in such a place would hang a hook or a
// search for good; these functions open without blocking and refuse
// anything but a regular file.
package regular

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrNotRegular is returned for a FIFO, device, socket or directory.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned by ReadFile for a file over its limit.
var ErrTooLarge = errors.New("file too large")

// Open opens path for reading if it is a regular file (following
// symbolic links), without blocking on a FIFO.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, fi.Mode().Type())
	}
	return f, nil
}

// ReadFile reads the regular file at path, refusing one over max bytes.
// A missing file gives an error for which errors.Is(err,
// fs.ErrNotExist) holds, as os.ReadFile's does.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: %w (over %d bytes)", path, ErrTooLarge, max)
	}
	return b, nil
}

// Package atomicfile replaces files so that a reader sees the old file or
// the new one, never part of one.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces the file at path with data (mode perm). The data goes to
// a temporary file PATH.*.tmp beside it, which is renamed into place, so
// two writers never share a temporary file; it is removed on failure.
func Write(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), perm)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

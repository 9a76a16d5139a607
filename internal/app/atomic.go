package app

import (
	"os"
	"path/filepath"
)

// writeFileAtomic replaces the file at path with data (mode perm) so that
// a reader sees the old file or the new one, never part of one, and two
// writers never share a temporary file. The temporary file is
// PATH.*.tmp beside it, removed on failure.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
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

// Package sibling finds git-synaptic's own programs: installed beside the
// program running (make install puts them in one directory), else on
// PATH.
package sibling

import (
	"os"
	"os/exec"
	"path/filepath"
)

// Path is the path of program in the running program's directory when it
// is an executable file there, else the one exec.LookPath finds.
func Path(program string) (string, error) {
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), program); isExecutable(p) {
			return p, nil
		}
	}
	return exec.LookPath(program)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

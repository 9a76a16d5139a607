//go:build !linux

package gitstore

// treeCPU cannot tell a process's CPU time here.
func treeCPU(int) (int64, bool) { return 0, false }

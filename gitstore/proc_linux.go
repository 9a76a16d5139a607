package gitstore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
)

// treeCPU returns the CPU time, in clock ticks, that process pid and its
// descendants have used, read from /proc; ok is false when it cannot
// tell.
func treeCPU(pid int) (ticks int64, ok bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	parent := map[int]int{}
	cpu := map[int]int64{}
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone since the glob
		}
		// pid (comm) state ppid ... utime stime cutime cstime: comm may hold spaces
		// and parentheses, so the fields are counted after its last ')'
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 15 {
			continue
		}
		id, err1 := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		pp, err2 := strconv.Atoi(string(f[1]))
		ut, err3 := strconv.ParseInt(string(f[11]), 10, 64)
		st, err4 := strconv.ParseInt(string(f[12]), 10, 64)
		// and what its children that ended used (index-pack's work
		// moves to fetch's cutime when it exits)
		cut, err5 := strconv.ParseInt(string(f[13]), 10, 64)
		cst, err6 := strconv.ParseInt(string(f[14]), 10, 64)
		if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
			continue
		}
		parent[id], cpu[id] = pp, ut+st+cut+cst
	}
	if _, found := cpu[pid]; !found {
		return 0, false
	}
	for id, t := range cpu {
		for p := id; p > 1; p = parent[p] {
			if p == pid {
				ticks += t
				break
			}
		}
	}
	return ticks, true
}

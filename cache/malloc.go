package cache

/*
#include <stdlib.h> // defines __GLIBC__ on glibc
#if defined(__GLIBC__)
#include <malloc.h>
#endif

static void synaptic_tune_malloc(void) {
#if defined(__GLIBC__)
	mallopt(M_TRIM_THRESHOLD, 16 << 20);
#endif
}
*/
import "C"

// SQLite runs on whatever thread cgo gives it, so glibc serves it from
// per-thread malloc arenas, and by default those hand memory back to the
// kernel (madvise) whenever 128 KiB at their top are free. On a virtual
// machine each such call flushes TLBs on every CPU: indexing tmux's 12k
// commits took 2.2 s instead of 0.8 s. Up to 16 MiB stay with the process.
func init() { C.synaptic_tune_malloc() }

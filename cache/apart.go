package cache

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/git-synaptic/git-synaptic/internal/offheap"
)

// apart returns n zeroed bytes mapped apart from Go's heap (offheap), for
// the large arrays of sign bits a long-lived process keeps, and the
// function that gives them back, once: they hold no pointers and live
// long, and on the heap they would count toward the garbage collector's
// target as many times over as GOGC says. The bytes are given back when
// owner is unreachable, if not before; nothing may read them after.
func apart[T any](owner *T, n int) (mem []byte, free func()) {
	mem, giveBack := offheap.Alloc(n)
	var once sync.Once
	free = func() { once.Do(giveBack) }
	runtime.AddCleanup(owner, func(free func()) { free() }, free)
	return mem, free
}

// words views n words of mem from byte off (a multiple of 8 from a
// mapping's start) as uint64s.
func words(mem []byte, off, n int) []uint64 {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&mem[off])), n)
}

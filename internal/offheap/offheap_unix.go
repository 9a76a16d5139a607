//go:build unix

// Package offheap gives memory mapped apart from Go's heap, for large
// data that holds no pointers and lives long: on the heap it would count
// toward the garbage collector's target as many times over as GOGC says
// (five in the warm process), and grow what the process holds by as much.
package offheap

import "syscall"

// Alloc returns n zeroed bytes mapped apart from Go's heap, and the
// function that gives them back (after which they must not be touched).
// Where no memory can be mapped, the bytes come from the heap.
func Alloc(n int) (b []byte, free func()) {
	if n <= 0 {
		return nil, func() {}
	}
	m, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n), func() {}
	}
	return m, func() { syscall.Munmap(m) }
}

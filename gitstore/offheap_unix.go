//go:build unix

package gitstore

import "syscall"

// offHeap copies data into memory mapped apart from Go's heap; free gives
// it back. The trees a warm process keeps (65 MB at a million entries)
// are live data that never changes and holds no pointers: on the heap
// they would count five times over toward the garbage collector's target
// (the warm process lets its heap grow to five times what is live,
// GOGC=400). Where no memory can be mapped, data stays on the heap.
func offHeap(data []byte) (kept []byte, free func()) {
	if len(data) == 0 {
		return data, func() {}
	}
	m, err := syscall.Mmap(-1, 0, len(data), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return data, func() {}
	}
	copy(m, data)
	return m, func() { syscall.Munmap(m) }
}

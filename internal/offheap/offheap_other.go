//go:build !unix

// Package offheap gives memory mapped apart from Go's heap, for large
// data that holds no pointers and lives long; where memory cannot be
// mapped apart, as here, it comes from the heap.
package offheap

// Alloc returns n zeroed bytes from the heap, and a function that does
// nothing.
func Alloc(n int) (b []byte, free func()) {
	if n <= 0 {
		return nil, func() {}
	}
	return make([]byte, n), func() {}
}

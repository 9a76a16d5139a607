//go:build !unix

package gitstore

// offHeap keeps data on the heap where memory cannot be mapped apart.
func offHeap(data []byte) (kept []byte, free func()) { return data, func() {} }

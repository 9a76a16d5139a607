//go:build !amd64

package cache

// hammingFast is false: distances512 (hamming.c) is written for x86-64.
var hammingFast = false

func distances512(words []uint64, valid, rowids []byte, n int, admit []uint64, q *[8]uint64, dist []uint16, count []int) {
	panic("cache: distances512 without AVX-512")
}

package cache

// #include "hamming.h"
import "C"

import "unsafe"

// hammingFast is whether this CPU runs distances512 (hamming.c). A search
// reads it on every scan; only tests change it, to run the Go loop too.
var hammingFast = C.synaptic_hamming_fast() != 0

// noRows is the bitset that admits no row, for an admit of no words.
var noRows = [1]uint64{}

// distances512 is distances8 for the n rows of one chunk (words, valid,
// rowids as signChunk holds them) in C, with AVX-512: dist gets their
// distances from q, count the rows at each distance (513 counts). The
// sign-bit stage over a million rows on this project's 2-core machine:
// 12.4 ms before, 10.4 with the Go loop, 6.7 with this (go test -bench
// HammingMillion ./cache, the medians of three runs interleaved).
func distances512(words []uint64, valid, rowids []byte, n int, admit []uint64, q *[8]uint64, dist []uint16, count []int) {
	if n == 0 {
		return
	}
	_ = words[8*n-1]
	_ = valid[(n-1)/8]
	_ = rowids[8*n-1]
	_ = dist[n-1]
	_ = count[512]
	var a *C.uint64_t
	switch {
	case admit == nil:
	case len(admit) == 0:
		a = (*C.uint64_t)(unsafe.Pointer(&noRows[0]))
	default:
		a = (*C.uint64_t)(unsafe.Pointer(&admit[0]))
	}
	C.synaptic_distances512((*C.uint64_t)(unsafe.Pointer(&words[0])), (*C.uint8_t)(unsafe.Pointer(&valid[0])),
		(*C.uint8_t)(unsafe.Pointer(&rowids[0])), C.int64_t(n), a, C.int64_t(len(admit)),
		(*C.uint64_t)(unsafe.Pointer(&q[0])), (*C.uint16_t)(unsafe.Pointer(&dist[0])), (*C.int64_t)(unsafe.Pointer(&count[0])))
}

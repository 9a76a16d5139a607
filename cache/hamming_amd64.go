package cache

// #include "hamming.h"
import "C"

import "unsafe"

// hammingLevel is what of hamming.c this CPU runs (2: AVX-512, 1:
// POPCNT, 0: neither), and hammingFast whether distances512 runs it. A
// search reads hammingFast on every scan; only tests change it, to run
// the Go loop too.
var (
	hammingLevel = int(C.synaptic_hamming_level())
	hammingFast  = hammingLevel > 0
)

// noRows is the bitset that admits no row, for an admit of no words.
var noRows = [1]uint64{}

// distances512 is distances8 for the n rows of one chunk (words, valid,
// rowids as signChunk holds them) in C, with AVX-512 or POPCNT
// (hammingLevel): dist gets their distances from q, count the rows at
// each distance (513 counts). The sign-bit stage over a million rows on
// this project's 2-core machine (go test -bench HammingMillion ./cache,
// medians of three): with AVX-512, 12.4 ms before, 10.4 with the Go loop,
// 6.7 with this; on the AMD EPYC it has since, without AVX-512, 11.3 ms
// with the Go loop and 9.2 with POPCNT.
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
	w, v, r := (*C.uint64_t)(unsafe.Pointer(&words[0])), (*C.uint8_t)(unsafe.Pointer(&valid[0])), (*C.uint8_t)(unsafe.Pointer(&rowids[0]))
	qp, d, c := (*C.uint64_t)(unsafe.Pointer(&q[0])), (*C.uint16_t)(unsafe.Pointer(&dist[0])), (*C.int64_t)(unsafe.Pointer(&count[0]))
	if hammingLevel == 2 {
		C.synaptic_distances512(w, v, r, C.int64_t(n), a, C.int64_t(len(admit)), qp, d, c)
	} else {
		C.synaptic_distances_popcnt(w, v, r, C.int64_t(n), a, C.int64_t(len(admit)), qp, d, c)
	}
}

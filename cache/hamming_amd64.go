package cache

// #include "hamming.h"
import "C"

import "unsafe"

// hammingLevel is what of hamming.c this CPU runs (2: AVX-512, 1:
// POPCNT, 0: neither), and hammingFast whether distancesC runs it. A
// search reads hammingFast on every scan; only tests change it, to run
// the Go loop too.
var (
	hammingLevel = int(C.synaptic_hamming_level())
	hammingFast  = hammingLevel > 0
)

// noRows is the bitset that admits no row, for an admit of no words.
var noRows = [1]uint64{}

// distancesC is distances8 (stride 8: each row's eight words, with
// AVX-512 or POPCNT by hammingLevel) or headDistances (stride 2: each
// row's first two words, signChunk.head, with POPCNT) for the n rows of
// one chunk (words, valid, rowids as signChunk holds them) in C: dist gets
// their distances from q, count the rows at each distance (hamming.c adds
// to all 513). The sign-bit stage over a million rows on this project's
// 2-core machine (go test -bench HammingMillion ./cache, medians of
// three): with AVX-512, 12.4 ms before, 10.4 with the Go loop, 6.7 with
// this; on the AMD EPYC it has since, without AVX-512, 11.3 ms with the
// Go loop and 9.2 with POPCNT.
func distancesC(words []uint64, stride int, valid, rowids []byte, n int, admit []uint64, q []uint64, dist []uint16, count []int) {
	if n == 0 {
		return
	}
	_ = words[stride*n-1]
	_ = q[stride-1]
	_ = valid[(n-1)/8]
	_ = rowids[8*n-1]
	_ = dist[n-1]
	_ = count[512]
	a := admitArg(admit)
	w, v, r := (*C.uint64_t)(unsafe.Pointer(&words[0])), (*C.uint8_t)(unsafe.Pointer(&valid[0])), (*C.uint8_t)(unsafe.Pointer(&rowids[0]))
	qp, d, c := (*C.uint64_t)(unsafe.Pointer(&q[0])), (*C.uint16_t)(unsafe.Pointer(&dist[0])), (*C.int64_t)(unsafe.Pointer(&count[0]))
	switch {
	case stride == 2:
		C.synaptic_head_distances(w, v, r, C.int64_t(n), a, C.int64_t(len(admit)), qp, d, c)
	case stride != 8:
		panic("cache: hamming.c reads rows of 8 words, or their first 2")
	case hammingLevel == 2:
		C.synaptic_distances512(w, v, r, C.int64_t(n), a, C.int64_t(len(admit)), qp, d, c)
	default:
		C.synaptic_distances_popcnt(w, v, r, C.int64_t(n), a, C.int64_t(len(admit)), qp, d, c)
	}
}

// admitArg is admit as hamming.c takes it: NULL for every row, and a set
// of no words as one that admits none.
func admitArg(admit []uint64) *C.uint64_t {
	switch {
	case admit == nil:
		return nil
	case len(admit) == 0:
		return (*C.uint64_t)(unsafe.Pointer(&noRows[0]))
	}
	return (*C.uint64_t)(unsafe.Pointer(&admit[0]))
}

// rowsWithin writes into at the indices of dist's distances at most cut,
// in order, as many as at holds, and returns how many it wrote. Where the
// scans run in C (hammingFast), so does this, eight distances at a time
// (SSE2): the pass over a million took 1.2 ms in Go.
func rowsWithin(dist []uint16, cut uint16, at []int32) int {
	if !hammingFast {
		return rowsWithinGo(dist, cut, at)
	}
	if len(dist) == 0 || len(at) == 0 {
		return 0
	}
	return int(C.synaptic_within((*C.uint16_t)(unsafe.Pointer(&dist[0])), C.int64_t(len(dist)), C.uint16_t(cut),
		(*C.int32_t)(unsafe.Pointer(&at[0])), C.int64_t(len(at))))
}

// nearestCentroidsC is nearestCentroids in C (POPCNT), for rows of eight
// words: out[i] gets the centroid of cent nearest the row at
// words[8*slots[i]:].
func nearestCentroidsC(words []uint64, slots []int32, cent []uint64, out []int32) {
	if len(slots) == 0 || len(cent) == 0 {
		return
	}
	_ = out[len(slots)-1]
	for _, s := range slots {
		_ = words[8*int(s)+7]
	}
	C.synaptic_nearest_centroids((*C.uint64_t)(unsafe.Pointer(&words[0])), (*C.int32_t)(unsafe.Pointer(&slots[0])), C.int64_t(len(slots)),
		(*C.uint64_t)(unsafe.Pointer(&cent[0])), C.int64_t(len(cent)/8), (*C.int32_t)(unsafe.Pointer(&out[0])))
}

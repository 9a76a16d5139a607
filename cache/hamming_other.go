//go:build !amd64

package cache

// hammingFast is false: distancesC (hamming.c) is written for x86-64.
var hammingFast = false

// hammingLevel is 0: neither of hamming.c's ways runs here.
var hammingLevel = 0

func distancesC(words []uint64, stride int, valid, rowids []byte, n int, admit []uint64, q []uint64, dist []uint16, count []int) {
	panic("cache: distancesC where hamming.c does not run")
}

func rowsWithin(dist []uint16, cut uint16, at []int32) int { return rowsWithinGo(dist, cut, at) }

func nearestCentroidsC(words []uint64, slots []int32, cent []uint64, out []int32) {
	panic("cache: nearestCentroidsC where hamming.c does not run")
}

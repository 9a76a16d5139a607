// The Hamming distances of a search's sign-bit stage (signs.go) with
// AVX-512: a row of the default model's 512 bits is one register, its
// distance from the query one xor, one population count of its eight
// words and their sum. The Go loop it stands in for (distances8) stays
// for CPUs without it, and both give the same distances.
#include <string.h>

#include "hamming.h"

#define SKIP 65535

static int admitted(const uint8_t *rowids, int64_t i, const uint64_t *admit, int64_t admit_words) {
	if (admit == NULL) {
		return 1;
	}
	uint64_t id;
	memcpy(&id, rowids + 8 * i, 8); // little-endian, as x86-64 is
	int64_t w = (int64_t)(id / 64);
	return (int64_t)id >= 0 && w < admit_words && (admit[w] >> (id % 64) & 1);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

int synaptic_hamming_fast(void) {
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq");
}

__attribute__((target("avx512f,avx512vpopcntdq"))) static inline int distance512(const uint64_t *row, __m512i q) {
	__m512i x = _mm512_xor_si512(_mm512_loadu_si512((const void *)row), q);
	return (int)_mm512_reduce_add_epi64(_mm512_popcnt_epi64(x));
}

__attribute__((target("avx512f,avx512vpopcntdq"))) void synaptic_distances512(
    const uint64_t *words, const uint8_t *valid, const uint8_t *rowids, int64_t n, const uint64_t *admit,
    int64_t admit_words, const uint64_t *q, uint16_t *dist, int64_t *count) {
	__m512i qv = _mm512_loadu_si512((const void *)q);
	// four histograms, so that consecutive rows at one distance do not
	// wait on each other's increments
	int32_t hist[4][520];
	memset(hist, 0, sizeof hist);
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		if (valid[i / 8] == 0xff && admit == NULL) {
			for (int j = 0; j < 8; j++) {
				int d = distance512(words + 8 * (i + j), qv);
				dist[i + j] = (uint16_t)d;
				hist[j & 3][d]++;
			}
			continue;
		}
		for (int j = 0; j < 8; j++) {
			int64_t r = i + j;
			if (!(valid[r / 8] >> (r % 8) & 1) || !admitted(rowids, r, admit, admit_words)) {
				dist[r] = SKIP;
				continue;
			}
			int d = distance512(words + 8 * r, qv);
			dist[r] = (uint16_t)d;
			hist[j & 3][d]++;
		}
	}
	for (; i < n; i++) {
		if (!(valid[i / 8] >> (i % 8) & 1) || !admitted(rowids, i, admit, admit_words)) {
			dist[i] = SKIP;
			continue;
		}
		int d = distance512(words + 8 * i, qv);
		dist[i] = (uint16_t)d;
		hist[0][d]++;
	}
	for (int d = 0; d <= 512; d++) {
		count[d] += hist[0][d] + hist[1][d] + hist[2][d] + hist[3][d];
	}
}

#else

int synaptic_hamming_fast(void) { return 0; }

void synaptic_distances512(const uint64_t *words, const uint8_t *valid, const uint8_t *rowids, int64_t n,
                           const uint64_t *admit, int64_t admit_words, const uint64_t *q, uint16_t *dist,
                           int64_t *count) {
	(void)words, (void)valid, (void)rowids, (void)n, (void)admit, (void)admit_words, (void)q, (void)dist,
	    (void)count;
}

#endif

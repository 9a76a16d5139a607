// The Hamming distances of a search's sign-bit stage (signs.go) in C: a
// row of the default model's 512 bits is eight words, its distance from
// the query the population count of their xor with the query's. With
// AVX-512 a row is one register (one xor, one count of its eight words),
// and eight rows' counts are summed together (group512); without it, a
// row is eight POPCNT instructions. The Go loop it
// stands in for (distances8) stays for CPUs with neither, and all give
// the same distances. A near-duplicate check's first stage (signhead.go)
// counts the first two words of each row alone, and picks out the rows
// within its cut (synaptic_within).
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

// PREFETCH_ROWS is how far ahead of the rows it measures a scan asks for
// their words: a scan reads memory faster with more reads under way than
// the CPU's own prefetchers start. With it, and AVX-512's eight rows at a
// time (group512), a million rows took 2.1 ms against 3.0 from the CPU's
// caches and 5.0 against 6.1 from memory; with POPCNT, 2.9 against 4.5
// and 5.3 against 7.0 (go test -bench HammingMillion ./cache, the
// 2-core machine, medians of five).
#define PREFETCH_ROWS 32

// DISTANCES is the body of each: DIST(row) is the distance of the row at
// row (STRIDE words) from the query, and GROUP(i) writes those of the
// eight rows from row i into dist[i] to dist[i+7].
#define DISTANCES(DIST, STRIDE, GROUP)                                                                             \
	/* four histograms, so that consecutive rows at one distance do not                                \
	   wait on each other's increments */                                                              \
	int32_t hist[4][520];                                                                              \
	memset(hist, 0, sizeof hist);                                                                      \
	for (int64_t i = 0; i < n; i += 8) {                                                               \
		if (i + 8 <= n && admit == NULL) {                                                         \
			/* a whole group without a filter: its eight rows measured at                      \
			   once, those without vectors then skipped */                                     \
			uint8_t v = valid[i / 8];                                                          \
			if (i + PREFETCH_ROWS + 8 <= n) {                                                  \
				const char *ahead = (const char *)(words + STRIDE * (i + PREFETCH_ROWS));  \
				for (int b = 0; b < 8 * STRIDE * 8; b += 64) {                             \
					__builtin_prefetch(ahead + b);                                     \
				}                                                                          \
			}                                                                                  \
			GROUP(i);                                                                          \
			for (int j = 0; j < 8; j++) {                                                      \
				if (v >> j & 1) {                                                          \
					hist[j & 3][dist[i + j]]++;                                        \
				} else {                                                                   \
					dist[i + j] = SKIP;                                                \
				}                                                                          \
			}                                                                                  \
			continue;                                                                          \
		}                                                                                          \
		/* a group a filter reads the rowids of, or the last, short one */                         \
		for (int j = 0; j < 8 && i + j < n; j++) {                                                 \
			int64_t r = i + j;                                                                 \
			if (!(valid[r / 8] >> (r % 8) & 1) || !admitted(rowids, r, admit, admit_words)) {  \
				dist[r] = SKIP;                                                            \
				continue;                                                                  \
			}                                                                                  \
			int d = DIST(words + STRIDE * r);                                                 \
			dist[r] = (uint16_t)d;                                                             \
			hist[j & 3][d]++;                                                                  \
		}                                                                                          \
	}                                                                                                  \
	for (int d = 0; d <= 512; d++) {                                                                   \
		count[d] += hist[0][d] + hist[1][d] + hist[2][d] + hist[3][d];                             \
	}

// EACH is a GROUP of eight rows measured one at a time by DIST.
#define EACH(DIST, STRIDE, i)                                                                              \
	for (int j = 0; j < 8; j++) {                                                                      \
		dist[(i) + j] = (uint16_t)DIST(words + STRIDE * ((i) + j));                                \
	}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

int64_t synaptic_within(const uint16_t *dist, int64_t n, uint16_t cut, int32_t *at, int64_t room) {
	int64_t m = 0, i = 0;
	__m128i c = _mm_set1_epi16((short)cut), zero = _mm_setzero_si128();
	for (; i + 8 <= n; i += 8) {
		// x <= cut where x - cut, saturated at zero, is zero: eight at once
		__m128i x = _mm_loadu_si128((const __m128i *)(dist + i));
		if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_subs_epu16(x, c), zero)) == 0) {
			continue;
		}
		for (int64_t j = i; j < i + 8; j++) {
			if (dist[j] <= cut && m < room) {
				at[m++] = (int32_t)j;
			}
		}
	}
	for (; i < n; i++) {
		if (dist[i] <= cut && m < room) {
			at[m++] = (int32_t)i;
		}
	}
	return m;
}

int synaptic_hamming_level(void) {
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq")) {
		return 2;
	}
	return __builtin_cpu_supports("popcnt") ? 1 : 0;
}

__attribute__((target("avx512f,avx512vpopcntdq"))) static inline int distance512(const uint64_t *row, __m512i q) {
	__m512i x = _mm512_xor_si512(_mm512_loadu_si512((const void *)row), q);
	return (int)_mm512_reduce_add_epi64(_mm512_popcnt_epi64(x));
}

// group512 writes the distances of the eight rows from row into out: each
// row's eight counts summed across the rows at once (three rounds of
// shuffles and adds for the eight), where one row at a time spends a
// horizontal sum on each.
__attribute__((target("avx512f,avx512vpopcntdq"))) static inline void group512(const uint64_t *row, __m512i q,
                                                                              uint16_t *out) {
	__m512i p[8];
	for (int j = 0; j < 8; j++) {
		p[j] = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_loadu_si512((const void *)(row + 8 * j)), q));
	}
	// each 128-bit lane of a: (row 2m's, row 2m+1's) sums of two words
	__m512i a0 = _mm512_add_epi64(_mm512_unpacklo_epi64(p[0], p[1]), _mm512_unpackhi_epi64(p[0], p[1]));
	__m512i a1 = _mm512_add_epi64(_mm512_unpacklo_epi64(p[2], p[3]), _mm512_unpackhi_epi64(p[2], p[3]));
	__m512i a2 = _mm512_add_epi64(_mm512_unpacklo_epi64(p[4], p[5]), _mm512_unpackhi_epi64(p[4], p[5]));
	__m512i a3 = _mm512_add_epi64(_mm512_unpacklo_epi64(p[6], p[7]), _mm512_unpackhi_epi64(p[6], p[7]));
	// lanes 0, 2 and 1, 3 of each pair added: two lanes a pair of rows
	__m512i b0 = _mm512_add_epi64(_mm512_shuffle_i64x2(a0, a1, 0x88), _mm512_shuffle_i64x2(a0, a1, 0xDD));
	__m512i b1 = _mm512_add_epi64(_mm512_shuffle_i64x2(a2, a3, 0x88), _mm512_shuffle_i64x2(a2, a3, 0xDD));
	// and again: one lane a pair of rows, the rows in order
	__m512i c = _mm512_add_epi64(_mm512_shuffle_i64x2(b0, b1, 0x88), _mm512_shuffle_i64x2(b0, b1, 0xDD));
	_mm_storeu_si128((__m128i *)out, _mm512_cvtepi64_epi16(c));
}

__attribute__((target("avx512f,avx512vpopcntdq"))) void synaptic_distances512(
    const uint64_t *words, const uint8_t *valid, const uint8_t *rowids, int64_t n, const uint64_t *admit,
    int64_t admit_words, const uint64_t *q, uint16_t *dist, int64_t *count) {
	__m512i qv = _mm512_loadu_si512((const void *)q);
#define DIST512(row) distance512(row, qv)
#define GROUP512(i) group512(words + 8 * (i), qv, dist + (i))
	DISTANCES(DIST512, 8, GROUP512)
#undef GROUP512
#undef DIST512
}

__attribute__((target("popcnt"))) static inline int distance_popcnt(const uint64_t *row, const uint64_t *q) {
	return __builtin_popcountll(row[0] ^ q[0]) + __builtin_popcountll(row[1] ^ q[1]) +
	       __builtin_popcountll(row[2] ^ q[2]) + __builtin_popcountll(row[3] ^ q[3]) +
	       __builtin_popcountll(row[4] ^ q[4]) + __builtin_popcountll(row[5] ^ q[5]) +
	       __builtin_popcountll(row[6] ^ q[6]) + __builtin_popcountll(row[7] ^ q[7]);
}

__attribute__((target("popcnt"))) void synaptic_distances_popcnt(const uint64_t *words, const uint8_t *valid,
                                                                  const uint8_t *rowids, int64_t n,
                                                                  const uint64_t *admit, int64_t admit_words,
                                                                  const uint64_t *q, uint16_t *dist,
                                                                  int64_t *count) {
#define DISTPOP(row) distance_popcnt(row, q)
#define GROUPPOP(i) EACH(DISTPOP, 8, i)
	DISTANCES(DISTPOP, 8, GROUPPOP)
#undef GROUPPOP
#undef DISTPOP
}

__attribute__((target("popcnt"))) static inline int distance_head(const uint64_t *row, const uint64_t *q) {
	return __builtin_popcountll(row[0] ^ q[0]) + __builtin_popcountll(row[1] ^ q[1]);
}

__attribute__((target("popcnt"))) void synaptic_head_distances(const uint64_t *words, const uint8_t *valid,
                                                                const uint8_t *rowids, int64_t n,
                                                                const uint64_t *admit, int64_t admit_words,
                                                                const uint64_t *q, uint16_t *dist, int64_t *count) {
#define DISTHEAD(row) distance_head(row, q)
#define GROUPHEAD(i) EACH(DISTHEAD, 2, i)
	DISTANCES(DISTHEAD, 2, GROUPHEAD)
#undef GROUPHEAD
#undef DISTHEAD
}

__attribute__((target("popcnt"))) void synaptic_nearest_centroids(const uint64_t *words, const int32_t *slots, int64_t m,
                                                                   const uint64_t *cent, int64_t c, int32_t *out) {
	for (int64_t i = 0; i < m; i++) {
		const uint64_t *row = words + 8 * (int64_t)slots[i];
		int best = 1 << 30;
		int32_t at = 0;
		for (int64_t j = 0; j < c; j++) {
			int d = distance_popcnt(cent + 8 * j, row);
			if (d < best) {
				best = d;
				at = (int32_t)j;
			}
		}
		out[i] = at;
	}
}

#else

int synaptic_hamming_level(void) { return 0; }

int64_t synaptic_within(const uint16_t *dist, int64_t n, uint16_t cut, int32_t *at, int64_t room) {
	(void)dist, (void)n, (void)cut, (void)at, (void)room;
	return 0;
}

void synaptic_distances512(const uint64_t *words, const uint8_t *valid, const uint8_t *rowids, int64_t n,
                           const uint64_t *admit, int64_t admit_words, const uint64_t *q, uint16_t *dist,
                           int64_t *count) {
	(void)words, (void)valid, (void)rowids, (void)n, (void)admit, (void)admit_words, (void)q, (void)dist,
	    (void)count;
}

void synaptic_distances_popcnt(const uint64_t *words, const uint8_t *valid, const uint8_t *rowids, int64_t n,
                               const uint64_t *admit, int64_t admit_words, const uint64_t *q, uint16_t *dist,
                               int64_t *count) {
	(void)words, (void)valid, (void)rowids, (void)n, (void)admit, (void)admit_words, (void)q, (void)dist,
	    (void)count;
}

void synaptic_head_distances(const uint64_t *words, const uint8_t *valid, const uint8_t *rowids, int64_t n,
                             const uint64_t *admit, int64_t admit_words, const uint64_t *q, uint16_t *dist,
                             int64_t *count) {
	(void)words, (void)valid, (void)rowids, (void)n, (void)admit, (void)admit_words, (void)q, (void)dist,
	    (void)count;
}

void synaptic_nearest_centroids(const uint64_t *words, const int32_t *slots, int64_t m, const uint64_t *cent,
                                int64_t c, int32_t *out) {
	(void)words, (void)slots, (void)m, (void)cent, (void)c, (void)out;
}

#endif

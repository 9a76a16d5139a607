#ifndef SYNAPTIC_HAMMING_H
#define SYNAPTIC_HAMMING_H

#include <stdint.h>

// synaptic_hamming_level is which of the functions below this CPU runs:
// 2 both (AVX-512 with its population count), 1
// synaptic_distances_popcnt (POPCNT), 0 neither.
int synaptic_hamming_level(void);

// synaptic_distances512 writes into dist the Hamming distance from q (8
// words) of each of the n rows of words (8 words a row), 65535 for a row
// whose bit in valid is clear or whose rowid (little-endian, 8 bytes a row
// in rowids) the bitset admit of admit_words words does not hold (admit
// NULL: every row), and adds each row it measures to count at its
// distance (513 counts).
void synaptic_distances512(const uint64_t *words, const uint8_t *valid, const uint8_t *rowids, int64_t n,
                           const uint64_t *admit, int64_t admit_words, const uint64_t *q, uint16_t *dist,
                           int64_t *count);

// synaptic_distances_popcnt is synaptic_distances512 with POPCNT alone.
void synaptic_distances_popcnt(const uint64_t *words, const uint8_t *valid, const uint8_t *rowids, int64_t n,
                               const uint64_t *admit, int64_t admit_words, const uint64_t *q, uint16_t *dist,
                               int64_t *count);

// synaptic_head_distances is synaptic_distances_popcnt over rows of two
// words (the first two of each row's, for a first stage).
void synaptic_head_distances(const uint64_t *words, const uint8_t *valid, const uint8_t *rowids, int64_t n,
                             const uint64_t *admit, int64_t admit_words, const uint64_t *q, uint16_t *dist,
                             int64_t *count);

// synaptic_within writes into at the indices of the distances among the n
// of dist that are at most cut, in order, room at most, and returns how
// many it wrote.
int64_t synaptic_within(const uint16_t *dist, int64_t n, uint16_t cut, int32_t *at, int64_t room);

// synaptic_nearest_centroids writes into out[i], for each of the m rows
// at words + 8 * slots[i] (8 words a row), the index of the centroid of
// cent (c of them, 8 words each) whose bits differ least from the row's,
// the first of those that tie (POPCNT).
void synaptic_nearest_centroids(const uint64_t *words, const int32_t *slots, int64_t m, const uint64_t *cent,
                                int64_t c, int32_t *out);

#endif

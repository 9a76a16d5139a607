// rowid_set(rowid): an aggregate that gathers the rowids of a query's rows
// as a bitset, bit i%8 of byte i/8 set for rowid i (little-endian words,
// as admit.go reads them), in one blob. A query of the rows a filter
// admits returned them one by one to Go: 171 ms for the 668,518 memory
// entries not archived among the million of the 1M bench repository, a
// long-lived process's first search reading its memory lane's set; 28 ms
// gathered in here (medians of 7, in process). Rowids below zero are left
// out (a cache writes none); one from rowidSetMax on is an error, not a
// bitset of gigabytes.
#include <stdint.h>
#include <string.h>

#include "rowset.h"

#define rowidSetMax ((sqlite3_int64)1 << 32)

typedef struct {
	unsigned char *bits;
	sqlite3_int64 n; // bytes
} RowidSet;

static void rowidSetStep(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
	RowidSet *s = sqlite3_aggregate_context(ctx, sizeof(RowidSet));
	sqlite3_int64 id, at;
	(void)argc;
	if (!s) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) return;
	id = sqlite3_value_int64(argv[0]);
	if (id < 0) return;
	if (id >= rowidSetMax) {
		sqlite3_result_error(ctx, "rowid_set: a rowid past 2^32", -1);
		return;
	}
	at = id / 8;
	if (at >= s->n) {
		// whole words, at least doubling
		sqlite3_int64 n = (at + 8) / 8 * 8;
		unsigned char *b;
		if (n < 2 * s->n) n = 2 * s->n;
		b = sqlite3_realloc64(s->bits, (sqlite3_uint64)n);
		if (!b) {
			sqlite3_result_error_nomem(ctx);
			return;
		}
		memset(b + s->n, 0, (size_t)(n - s->n));
		s->bits = b;
		s->n = n;
	}
	s->bits[at] |= (unsigned char)(1u << (id % 8));
}

static void rowidSetFinal(sqlite3_context *ctx) {
	RowidSet *s = sqlite3_aggregate_context(ctx, 0);
	if (!s || !s->bits) {
		sqlite3_result_zeroblob(ctx, 0);
		return;
	}
	sqlite3_result_blob64(ctx, s->bits, (sqlite3_uint64)s->n, sqlite3_free);
	s->bits = 0;
	s->n = 0;
}

int synaptic_rowset_init(sqlite3 *db, char **errmsg, const void *api) {
	(void)errmsg;
	(void)api;
	return sqlite3_create_function_v2(db, "rowid_set", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, 0, 0, rowidSetStep, rowidSetFinal, 0);
}

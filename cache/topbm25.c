// top_bm25: FTS5's bm25() for a query that only wants the best k rows.
//
// bm25() reads every matching row's length from the %_docsize table, a
// B-tree lookup per row; an OR query of common words matches tens of
// thousands of rows, and those lookups were most of a search's time. This
// function keeps the k best scores so far in a min-heap. A row is given its
// exact score (bit for bit what bm25() computes) only when an upper bound
// on it, taken without its length, could still beat the k-th best so far;
// every other row gets 0.0, which sorts after every real (negative) score.
// The bound uses what the matches tell about the row for free: a column
// holding a match at token offset o has more than o tokens.
// So `ORDER BY top_bm25(fts, k, w...) LIMIT n` with n <= k returns exactly
// what `ORDER BY bm25(fts, w...) LIMIT n` does, and the lookups it skips
// are the rows that could not have made the list.
//
// A row the admission set rejects is given 0.0 at once, without reading
// its matches: a filter that admits few rows (a search's commits among
// much memory) is ranked in one pass over the matches, at the cost of
// walking them, instead of widening windows over all of them.
//
// SQL: top_bm25(fts, k, admit, weight0, weight1, ...); k above topMaxK (or
// below 1) turns the pruning off; admit is NULL (every row) or a bitset
// blob, bit rowid%8 of byte rowid/8 set for each row admitted.
#include <sqlite3.h>
#include <math.h>

// Every product rounded on its own, never fused into a multiply-add (as
// compilers may where the CPU has one): the lexicon (lexindex.go) computes
// the same scores in Go, to the bit.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
#include <string.h>

#include "topbm25.h"

enum { topMaxK = 1 << 16 };

// bm25()'s parameters.
static const double topK1 = 1.2, topB = 0.75;

typedef struct {
	int nPhrase;
	double avgdl;
	double *idf, *freq, *heap;
	int *maxOff; // largest instance offset per column in the current row
	int nCol, k, n;
	sqlite3_int64 lastRowid;
	double lastVal;
	int haveLast;
} Top;

static int topCount(const Fts5ExtensionApi *api, Fts5Context *f, void *p) {
	(void)api;
	(void)f;
	(*(sqlite3_int64 *)p)++;
	return SQLITE_OK;
}

// topPush offers a score to the min-heap of the k best.
static void topPush(Top *t, double s) {
	int i;
	if (t->n < t->k) {
		i = t->n++;
		t->heap[i] = s;
		while (i > 0) {
			int p = (i - 1) / 2;
			double x;
			if (t->heap[p] <= t->heap[i]) break;
			x = t->heap[p], t->heap[p] = t->heap[i], t->heap[i] = x;
			i = p;
		}
		return;
	}
	if (s <= t->heap[0]) return;
	t->heap[0] = s;
	i = 0;
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		double x;
		if (l < t->n && t->heap[l] < t->heap[m]) m = l;
		if (r < t->n && t->heap[r] < t->heap[m]) m = r;
		if (m == i) break;
		x = t->heap[m], t->heap[m] = t->heap[i], t->heap[i] = x;
		i = m;
	}
}

// topData is bm25()'s per-query setup (average length, IDF per phrase,
// same formulas) plus the heap.
static int topData(const Fts5ExtensionApi *api, Fts5Context *f, int k, Top **out) {
	Top *t = (Top *)api->xGetAuxdata(f, 0);
	int rc = SQLITE_OK, i, nPhrase, nCol;
	sqlite3_int64 nRow = 0, nTok = 0, nByte;
	if (t) {
		*out = t;
		return SQLITE_OK;
	}
	if (k < 1 || k > topMaxK) k = 0;
	nPhrase = api->xPhraseCount(f);
	nCol = api->xColumnCount(f);
	nByte = sizeof(Top) + (sqlite3_int64)(2 * nPhrase + k) * sizeof(double) + (sqlite3_int64)nCol * sizeof(int);
	t = sqlite3_malloc64(nByte);
	if (!t) return SQLITE_NOMEM;
	memset(t, 0, nByte);
	t->nPhrase = nPhrase;
	t->nCol = nCol;
	t->k = k;
	t->idf = (double *)&t[1];
	t->freq = &t->idf[nPhrase];
	t->heap = &t->freq[nPhrase];
	t->maxOff = (int *)&t->heap[k];
	rc = api->xRowCount(f, &nRow);
	if (rc == SQLITE_OK) rc = api->xColumnTotalSize(f, -1, &nTok);
	if (rc == SQLITE_OK) t->avgdl = (double)nTok / (double)nRow;
	for (i = 0; rc == SQLITE_OK && i < nPhrase; i++) {
		sqlite3_int64 nHit = 0;
		rc = api->xQueryPhrase(f, i, (void *)&nHit, topCount);
		if (rc == SQLITE_OK) {
			double idf = log((nRow - nHit + 0.5) / (nHit + 0.5));
			if (idf <= 0.0) idf = 1e-6;
			t->idf[i] = idf;
		}
	}
	if (rc == SQLITE_OK) rc = api->xSetAuxdata(f, t, sqlite3_free);
	else sqlite3_free(t);
	if (rc == SQLITE_OK) *out = t;
	return rc;
}

static double topScore(const Top *t, double D) {
	double score = 0.0;
	int i;
	for (i = 0; i < t->nPhrase; i++) {
		score += t->idf[i] * ((t->freq[i] * (topK1 + 1.0)) / (t->freq[i] + topK1 * (1 - topB + topB * D / t->avgdl)));
	}
	return score;
}

static void topBm25(const Fts5ExtensionApi *api, Fts5Context *f, sqlite3_context *ctx, int nVal, sqlite3_value **apVal) {
	Top *t = 0;
	int rc, i, nInst = 0, prune = 0;
	sqlite3_int64 rowid;
	double val;
	rc = topData(api, f, nVal > 0 ? sqlite3_value_int(apVal[0]) : 0, &t);
	if (rc != SQLITE_OK) {
		sqlite3_result_error_code(ctx, rc);
		return;
	}
	// SQLite may evaluate the function twice for one row (select list and
	// ORDER BY); the heap must see each row once.
	rowid = api->xRowid(f);
	if (t->haveLast && rowid == t->lastRowid) {
		sqlite3_result_double(ctx, t->lastVal);
		return;
	}
	if (nVal > 1 && sqlite3_value_type(apVal[1]) == SQLITE_BLOB) {
		const unsigned char *admit = sqlite3_value_blob(apVal[1]);
		sqlite3_int64 n = sqlite3_value_bytes(apVal[1]);
		if (rowid < 0 || rowid / 8 >= n || !((admit[rowid / 8] >> (rowid % 8)) & 1)) {
			t->haveLast = 1;
			t->lastRowid = rowid;
			t->lastVal = 0.0;
			sqlite3_result_double(ctx, 0.0);
			return;
		}
	}
	if (t->k > 0 && t->n == t->k) {
		// A bound from which phrases the row holds, without reading how
		// often: each phrase adds less than idf * (k1 + 1) to BM25, however
		// frequent. A row holding only common words cannot beat the k-th
		// best once the heap holds rows with rare ones, and is not read.
		double bound = 0.0;
		for (i = 0; i < t->nPhrase; i++) {
			Fts5PhraseIter it;
			int ic = -1, io = 0;
			rc = api->xPhraseFirst(f, i, &it, &ic, &io);
			if (rc != SQLITE_OK) {
				sqlite3_result_error_code(ctx, rc);
				return;
			}
			if (ic >= 0) bound += t->idf[i] * (topK1 + 1.0);
		}
		if (bound < t->heap[0]) {
			t->haveLast = 1;
			t->lastRowid = rowid;
			t->lastVal = 0.0;
			sqlite3_result_double(ctx, 0.0);
			return;
		}
	}
	memset(t->freq, 0, sizeof(double) * t->nPhrase);
	for (i = 0; i < t->nCol; i++) t->maxOff[i] = -1;
	rc = api->xInstCount(f, &nInst);
	for (i = 0; rc == SQLITE_OK && i < nInst; i++) {
		int ip, ic, io;
		rc = api->xInst(f, i, &ip, &ic, &io);
		if (rc == SQLITE_OK) {
			t->freq[ip] += (nVal > ic + 2) ? sqlite3_value_double(apVal[ic + 2]) : 1.0;
			if (ic >= 0 && ic < t->nCol && io > t->maxOff[ic]) t->maxOff[ic] = io;
		}
	}
	if (rc != SQLITE_OK) {
		sqlite3_result_error_code(ctx, rc);
		return;
	}
	if (t->k > 0 && t->n == t->k) {
		// A lower bound on the row's length: each column with a match at
		// offset o holds more than o tokens. BM25 only falls as the row
		// grows, so the score at this length bounds the row's score.
		int dmin = 0;
		for (i = 0; i < t->nCol; i++) dmin += t->maxOff[i] + 1;
		prune = topScore(t, dmin) < t->heap[0];
	}
	if (prune) {
		val = 0.0;
	} else {
		int nTok = 0;
		double s;
		rc = api->xColumnSize(f, -1, &nTok);
		if (rc != SQLITE_OK) {
			sqlite3_result_error_code(ctx, rc);
			return;
		}
		s = topScore(t, (double)nTok);
		if (t->k > 0) topPush(t, s);
		val = -1.0 * s;
	}
	t->haveLast = 1;
	t->lastRowid = rowid;
	t->lastVal = val;
	sqlite3_result_double(ctx, val);
}

// fts_tokens(text): the tokens FTS5 indexes for text in the fts table
// (its tokenizer, porter over unicode61), each cut to the length FTS5
// keeps, joined by single spaces (no token holds one); the in-memory
// lexical index (lexindex.go) reads documents and queries through it, so
// that it sees exactly the terms FTS5 does.

// ftsMaxToken is FTS5_MAX_TOKEN_SIZE: FTS5 keeps no more of a token.
enum { ftsMaxToken = 32768 };

typedef struct {
	fts5_api *fts;
	fts5_tokenizer tok;
	Fts5Tokenizer *inst;
} Tokens;

typedef struct {
	char *buf;
	sqlite3_int64 n, cap;
} TokenBuf;

static int tokensAdd(void *p, int tflags, const char *tok, int nTok, int iStart, int iEnd) {
	TokenBuf *b = (TokenBuf *)p;
	(void)iStart;
	(void)iEnd;
	if (tflags & FTS5_TOKEN_COLOCATED) return SQLITE_OK; // FTS5 counts none of them
	if (nTok > ftsMaxToken) nTok = ftsMaxToken;
	if (b->n + nTok + 1 > b->cap) {
		sqlite3_int64 cap = 2 * b->cap + nTok + 64;
		char *nb = sqlite3_realloc64(b->buf, cap);
		if (!nb) return SQLITE_NOMEM;
		b->buf = nb;
		b->cap = cap;
	}
	if (b->n > 0) b->buf[b->n++] = ' ';
	memcpy(b->buf + b->n, tok, nTok);
	b->n += nTok;
	return SQLITE_OK;
}

static void tokensFree(void *p) {
	Tokens *t = (Tokens *)p;
	if (t->inst) t->tok.xDelete(t->inst);
	sqlite3_free(t);
}

static void ftsTokens(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
	Tokens *t = (Tokens *)sqlite3_user_data(ctx);
	TokenBuf b = {0, 0, 0};
	const char *text;
	int n, rc;
	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
	if (!t->inst) {
		// the fts table's tokenize='porter unicode61'
		const char *args[] = {"unicode61"};
		void *ud = 0;
		rc = t->fts->xFindTokenizer(t->fts, "porter", &ud, &t->tok);
		if (rc == SQLITE_OK) rc = t->tok.xCreate(ud, args, 1, &t->inst);
		if (rc != SQLITE_OK) {
			t->inst = 0;
			sqlite3_result_error_code(ctx, rc);
			return;
		}
	}
	text = (const char *)sqlite3_value_text(argv[0]);
	n = sqlite3_value_bytes(argv[0]);
	rc = t->tok.xTokenize(t->inst, (void *)&b, FTS5_TOKENIZE_DOCUMENT, text ? text : "", n, tokensAdd);
	if (rc != SQLITE_OK) {
		sqlite3_free(b.buf);
		sqlite3_result_error_code(ctx, rc);
		return;
	}
	sqlite3_result_text64(ctx, b.buf ? b.buf : "", b.n, b.buf ? sqlite3_free : SQLITE_TRANSIENT, SQLITE_UTF8);
}

// fts_freq2(fts): twice the weighted count of the query's phrases in the
// row (an instance in content counts 2, in tags 1: Search's weights 1.0
// and 0.5), what top_bm25 sums as a phrase's frequency. The lexicon asks
// FTS5 for it for a word FTS5 makes a phrase of several tokens.
static void ftsFreq2(const Fts5ExtensionApi *api, Fts5Context *f, sqlite3_context *ctx, int nVal, sqlite3_value **apVal) {
	int rc, i, n = 0;
	sqlite3_int64 f2 = 0;
	(void)nVal;
	(void)apVal;
	rc = api->xInstCount(f, &n);
	for (i = 0; rc == SQLITE_OK && i < n; i++) {
		int ip, ic, io;
		rc = api->xInst(f, i, &ip, &ic, &io);
		if (rc == SQLITE_OK) f2 += ic == 0 ? 2 : 1;
	}
	if (rc != SQLITE_OK) {
		sqlite3_result_error_code(ctx, rc);
		return;
	}
	sqlite3_result_int64(ctx, f2);
}

int synaptic_top_bm25_init(sqlite3 *db, char **errmsg, const void *api) {
	fts5_api *fts = 0;
	sqlite3_stmt *st = 0;
	Tokens *t;
	int rc;
	(void)errmsg;
	(void)api;
	if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, 0) == SQLITE_OK) {
		sqlite3_bind_pointer(st, 1, (void *)&fts, "fts5_api_ptr", 0);
		sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (!fts) return SQLITE_OK; // no FTS5 here: queries naming top_bm25 fail
	rc = fts->xCreateFunction(fts, "top_bm25", 0, topBm25, 0);
	if (rc == SQLITE_OK) rc = fts->xCreateFunction(fts, "fts_freq2", 0, ftsFreq2, 0);
	if (rc != SQLITE_OK) return rc;
	t = sqlite3_malloc(sizeof(Tokens));
	if (!t) return SQLITE_NOMEM;
	memset(t, 0, sizeof(Tokens));
	t->fts = fts;
	return sqlite3_create_function_v2(db, "fts_tokens", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, t, ftsTokens, 0, 0, tokensFree);
}

#ifndef SYNAPTIC_TOPBM25_H
#define SYNAPTIC_TOPBM25_H

#include <sqlite3.h>

// synaptic_top_bm25_init registers top_bm25 (see topbm25.c) on a
// connection; it has sqlite3_auto_extension's signature.
int synaptic_top_bm25_init(sqlite3 *db, char **errmsg, const void *api);

#endif

#ifndef SYNAPTIC_ROWSET_H
#define SYNAPTIC_ROWSET_H

#include <sqlite3.h>

// synaptic_rowset_init registers rowid_set (see rowset.c) on a
// connection; it has sqlite3_auto_extension's signature.
int synaptic_rowset_init(sqlite3 *db, char **errmsg, const void *api);

#endif

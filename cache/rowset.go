package cache

// #cgo CFLAGS: -DSQLITE_CORE
// #include "rowset.h"
import "C"

// rowid_set (rowset.c) in every connection of this process.
func init() { C.sqlite3_auto_extension((*[0]byte)(C.synaptic_rowset_init)) }

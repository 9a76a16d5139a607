package cache

// #cgo CFLAGS: -DSQLITE_CORE
// #cgo linux LDFLAGS: -lm
// #include "topbm25.h"
import "C"

// top_bm25 (topbm25.c) in every connection of this process, next to
// sqlite-vec: the same ranking as FTS5's bm25() for top-k queries, without
// reading the length of rows that cannot make the list.
func init() { C.sqlite3_auto_extension((*[0]byte)(C.synaptic_top_bm25_init)) }

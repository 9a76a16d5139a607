//go:build !linux

package cache

// hugePages is a no-op where madvise has no huge pages to ask for.
func hugePages([]uint64) {}

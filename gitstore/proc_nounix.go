//go:build !unix

package gitstore

// processExists cannot tell here: a gc.pid of this host is taken as
// running, within git's 12 hours.
func processExists(int) bool { return true }

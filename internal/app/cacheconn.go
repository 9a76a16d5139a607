package app

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
)

// cacheConn is a Service's connection to its cache: the handle, opened on
// first use and kept; the file it opened, to notice another process
// deleted or replaced it; whether it is indexed up to the memory refs;
// and how long its writes wait for another process. What brings it up to
// the refs is the Service's (ready, in refresh.go): this holds only the
// connection and its state.
type cacheConn struct {
	path  string        // cache.db, in the git common dir
	c     *cache.Cache  // nil until opened
	file  os.FileInfo   // the file c opened
	fresh bool          // indexed up to the refs since they last moved here
	busy  time.Duration // Options.BusyTimeout, or the request's
	hold  bool          // a long-lived process: keep vectors and the lexicon in memory
	warnf func(format string, args ...any)
}

// open returns the cache, opening it the first time; a damaged or
// outdated cache is replaced by an empty one that the next refresh fills.
func (cc *cacheConn) open() (*cache.Cache, error) {
	if cc.c != nil {
		// a long-lived process's requests wait as long as each asks
		if err := cc.c.SetBusyTimeout(cc.busy); err != nil {
			return nil, err
		}
		return cc.c, nil
	}
	c, rebuilt, err := cache.Open(cc.path, cc.busy)
	if errors.Is(err, cache.ErrNewerSchema) {
		return nil, fmt.Errorf("open cache %s: %w: run the newer git-synaptic (restart an MCP server or agent session started before the upgrade), or rebuild it for this one with 'git synaptic reindex' (it is derived from the refs)", cc.path, err)
	}
	if cache.IsBusy(err) {
		return nil, fmt.Errorf("open cache %s: %w (another git-synaptic is writing it; try again)", cc.path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open cache %s: %w (cache.db is derived from the refs: deleting it loses nothing, the next command rebuilds it)", cc.path, err)
	}
	if rebuilt {
		cc.warnf("the cache at %s was unreadable or of another version; rebuilding it from the memory refs", cc.path)
	}
	c.NoticeMoves(func(moved int, done bool, took time.Duration) {
		if done {
			cc.warnf("moved %d stored vectors to the vector store's new layout in %s (once; searches read them faster)", moved, took.Round(time.Second))
		} else {
			cc.warnf("moving the stored vectors to the vector store's new layout, once: %d so far (%s)", moved, took.Round(time.Second))
		}
	})
	if cc.hold {
		c.HoldVectors(heldVectorBytes)
		c.HoldLexicon()
	}
	cc.c = c
	cc.file, _ = os.Stat(cc.path)
	return c, nil
}

// opened is the cache if it is open, else nil.
func (cc *cacheConn) opened() *cache.Cache { return cc.c }

// heldVectorBytes bounds the float vectors a long-lived process keeps in
// memory for its searches' exact scoring (cache.HoldVectors): 32k vectors
// of the default model, every one of a memory of 10k entries. At 10k
// entries it took a hybrid search in a Session from 8.4 to 7.4 ms, at
// 100k from 11.8 to 10.3 ms (medians of 90).
const heldVectorBytes = 64 << 20

// refsMoved says the memory refs moved under this connection (a write, a
// sync, a repair): the next ready reads them again.
func (cc *cacheConn) refsMoved() { cc.fresh = false }

// replaced reports whether the cache file open here was deleted or
// replaced since (by reindex, or a user: deleting it loses nothing), so
// that a long-lived process opens the new one instead of writing to the
// old.
func (cc *cacheConn) replaced() bool {
	fi, err := os.Stat(cc.path)
	return err != nil || cc.file == nil || !os.SameFile(fi, cc.file)
}

// dropIfReplaced closes the cache if its file was replaced, so that the
// next open takes the new one; it reports whether it did.
func (cc *cacheConn) dropIfReplaced() bool {
	if cc.c == nil || !cc.replaced() {
		return false
	}
	cc.drop()
	return true
}

// drop closes the cache and forgets it, and that it was fresh.
func (cc *cacheConn) drop() {
	if cc.c != nil {
		cc.c.Close()
		cc.c = nil
	}
	cc.fresh = false
}

// remove drops the cache and deletes its files (the usage and vector
// stores stay: cache.Remove).
func (cc *cacheConn) remove() error {
	cc.drop()
	return cache.Remove(cc.path)
}

// recreate replaces a corrupt cache with an empty one, saying so.
func (cc *cacheConn) recreate() (*cache.Cache, error) {
	cc.warnf("the cache at %s is corrupt; rebuilding it from the memory refs", cc.path)
	if err := cc.remove(); err != nil {
		return nil, err
	}
	return cc.open()
}

// close closes the cache if it is open.
func (cc *cacheConn) close() error {
	if cc.c == nil {
		return nil
	}
	err := cc.c.Close()
	cc.c = nil
	return err
}

package gitstore

import (
	"errors"
	"io/fs"
	"sync/atomic"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// objectStore is go-git's object storage made to survive git maintenance.
// go-git lists the pack files once and keeps them open; after git gc or git
// repack (run by the user, or by git's auto-gc after a fetch or commit) an
// object it wrote loose sits in a pack it has never listed, and a pack it
// listed may be gone. A read that misses therefore lists the packs again
// and retries, so a long-lived process (the MCP server) and a write
// racing a repack both see the repository as it is now.
type objectStore struct {
	*filesystem.Storage
	// alt is the private repository's store, read after a miss here
	// (nil until the private repository is opened).
	alt atomic.Pointer[objectStore]
	// cat reads packed objects for smallRead (catfile.go).
	cat *catFile
}

// newObjectStore opens the object storage of the git directory dir.
func newObjectStore(dir string) *objectStore {
	st := filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true})
	return &objectStore{Storage: st, cat: &catFile{gitDir: dir}}
}

// Close closes the packs held open and stops the cat-file process.
func (s *objectStore) Close() error {
	s.cat.Close()
	return s.Storage.Close()
}

// both reads from this store, then from alt after a miss.
func (s *objectStore) both(read func(*filesystem.Storage) error) error {
	err := read(s.Storage)
	if alt := s.alt.Load(); alt != nil && IsMissing(err) {
		err = read(alt.Storage)
	}
	return err
}

// IsMissing reports whether err says an object (or the pack that held it)
// is not there: after a rescan that means really missing, not repacked.
func IsMissing(err error) bool {
	return errors.Is(err, plumbing.ErrObjectNotFound) || errors.Is(err, dotgit.ErrPackfileNotFound) || errors.Is(err, fs.ErrNotExist)
}

// rescan forgets the pack list and closes the packs held open, so the next
// read lists objects/pack afresh.
func (s *objectStore) rescan() {
	s.Storage.Close()
	s.Storage.Reindex()
	if alt := s.alt.Load(); alt != nil {
		alt.Storage.Close()
		alt.Storage.Reindex()
	}
}

// missRetries are the pauses before each new look after a miss: a repack
// writes its pack, then deletes the old ones and the loose objects, so a
// reader can miss twice in a row while one runs; an object really missing
// costs their sum.
var missRetries = []time.Duration{0, 5 * time.Millisecond, 20 * time.Millisecond}

// retry runs read until it finds the object or the retries are spent,
// listing the packs again before each new look.
func (s *objectStore) retry(read func() error) error {
	err := read()
	for _, pause := range missRetries {
		if err == nil || !IsMissing(err) {
			return err
		}
		time.Sleep(pause)
		s.rescan()
		err = read()
	}
	return err
}

// EncodedObject reads object h, looking again after a miss.
func (s *objectStore) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (o plumbing.EncodedObject, err error) {
	err = s.retry(func() error {
		return s.both(func(st *filesystem.Storage) error {
			o, err = st.EncodedObject(t, h)
			return err
		})
	})
	return o, err
}

// HasEncodedObject reports (nil) whether h is present, looking again after a miss.
func (s *objectStore) HasEncodedObject(h plumbing.Hash) error {
	return s.retry(func() error {
		return s.both(func(st *filesystem.Storage) error { return st.HasEncodedObject(h) })
	})
}

// EncodedObjectSize is the size of object h, looking again after a miss.
func (s *objectStore) EncodedObjectSize(h plumbing.Hash) (n int64, err error) {
	err = s.retry(func() error {
		return s.both(func(st *filesystem.Storage) error {
			n, err = st.EncodedObjectSize(h)
			return err
		})
	})
	return n, err
}

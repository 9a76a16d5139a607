package gitstore

import (
	"errors"
	"io/fs"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// objectStore is go-git's object storage made to survive git maintenance.
// go-git lists the pack files once and keeps them open; after git gc or git
// repack (run by the user, or by git's auto-gc after a fetch or commit) an
// object it wrote loose sits in a pack it has never listed, and a pack it
// listed may be gone. A read that misses therefore lists the packs again
// and retries once, so a long-lived process (the MCP server) and a write
// racing a repack both see the repository as it is now.
type objectStore struct {
	*filesystem.Storage
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
}

// EncodedObject reads object h, rescanning the packs once on a miss.
func (s *objectStore) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	o, err := s.Storage.EncodedObject(t, h)
	if err != nil && IsMissing(err) {
		s.rescan()
		o, err = s.Storage.EncodedObject(t, h)
	}
	return o, err
}

// HasEncodedObject reports (nil) whether h is present, rescanning once on a miss.
func (s *objectStore) HasEncodedObject(h plumbing.Hash) error {
	err := s.Storage.HasEncodedObject(h)
	if err != nil && IsMissing(err) {
		s.rescan()
		err = s.Storage.HasEncodedObject(h)
	}
	return err
}

// EncodedObjectSize is the size of object h, rescanning once on a miss.
func (s *objectStore) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	n, err := s.Storage.EncodedObjectSize(h)
	if err != nil && IsMissing(err) {
		s.rescan()
		n, err = s.Storage.EncodedObjectSize(h)
	}
	return n, err
}

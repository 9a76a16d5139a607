package memlog

import (
	"context"
	"sync"

	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/memory"
)

// readChange is a changed memory file read and decoded: an entry or an
// operation with its document, or why it cannot be indexed.
type readChange struct {
	entry memory.Entry
	op    memory.Op
	data  []byte
	err   error
}

// toRead reports whether a change, of kind (memory.PathKind of its path),
// is a memory file to read: an entry or an operation, there and a regular
// file.
func toRead(ch gitstore.Change, kind string) bool {
	return !ch.Deleted && (kind == "entry" || kind == "op") && gitstore.RegularFile(ch.Mode)
}

// readAhead reads and decodes, in a goroutine of its own, the changes
// toRead picks, in order, while the caller writes the ones before them
// into the cache: at a million entries, reading and decoding were 40 s of
// a rebuild that did them between the writes. The goroutine alone reads
// the repository meanwhile. The channel closes after the last change, or
// early once ctx ends; stop ends the goroutine and waits for it.
func (ix *Index) readAhead(ctx context.Context, changes []gitstore.Change) (reads <-chan readChange, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan readChange, 256)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(out)
		for _, ch := range changes {
			kind, id := memory.PathKind(ch.Path)
			if !toRead(ch, kind) {
				continue
			}
			select {
			case out <- ix.readMemoryFile(ch, kind, id):
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, func() { cancel(); wg.Wait() }
}

// readMemoryFile reads and decodes the entry or operation id (of kind)
// at ch.
func (ix *Index) readMemoryFile(ch gitstore.Change, kind, id string) readChange {
	data, err := ix.Log.ReadBlob(ch.Hash, memory.MaxDocumentBytes)
	if err != nil {
		return readChange{err: err}
	}
	r := readChange{data: data}
	switch kind {
	case "entry":
		r.entry, r.err = memory.DecodeEntry(data, id)
	default:
		r.op, r.err = memory.DecodeOp(data, id)
	}
	return r
}

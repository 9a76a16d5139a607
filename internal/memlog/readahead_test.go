package memlog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Reading ahead yields the memory files of a change list in order, each
// decoded or with why it cannot be, and skips what is not to be read;
// stopped before the end, with more read than the reader holds, it ends
// its goroutine at once.
func TestReadAheadYieldsInOrderAndStops(t *testing.T) {
	ctx := context.Background()
	log := NewMemory()
	at := time.Now().UTC()
	var files []gitstore.File
	for i := range 600 {
		e := memory.Entry{V: 1, ID: memory.NewID(), Type: memory.TypeInsight, Content: fmt.Sprintf("entry %d", i), Author: "Ann <ann@x>", Created: at}
		doc, err := memory.EncodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, gitstore.File{Path: memory.EntryPath(e.ID), Data: doc})
	}
	bad := memory.EntryPath(memory.NewID())
	files = append(files, gitstore.File{Path: bad, Data: []byte("not json")}, gitstore.File{Path: "README", Data: []byte("not memory")})
	tip, _, err := log.Append(ctx, "refs/synaptic/memory", files, gitstore.Signature{Name: "Ann", Email: "ann@x", When: at}, "memory")
	if err != nil {
		t.Fatal(err)
	}
	changes, err := log.Diff(gitstore.ZeroHash, tip)
	if err != nil {
		t.Fatal(err)
	}
	ix := &Index{Log: log}

	reads, stop := ix.readAhead(ctx, changes)
	var got []readChange
	for r := range reads {
		got = append(got, r)
	}
	stop()
	var want []gitstore.Change
	for _, ch := range changes {
		if kind, _ := memory.PathKind(ch.Path); toRead(ch, kind) {
			want = append(want, ch)
		}
	}
	if len(want) != 601 || len(got) != len(want) {
		t.Fatalf("%d changes to read, %d read; want 601 of both", len(want), len(got))
	}
	for i, ch := range want {
		_, id := memory.PathKind(ch.Path)
		switch {
		case ch.Path == bad && got[i].err == nil:
			t.Fatalf("%s: read without an error", ch.Path)
		case ch.Path != bad && (got[i].err != nil || got[i].entry.ID != id):
			t.Fatalf("change %d (%s): read %s, %v", i, ch.Path, got[i].entry.ID, got[i].err)
		}
	}

	reads, stop = ix.readAhead(ctx, changes)
	<-reads
	done := make(chan struct{})
	go func() { stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("stop did not end the reader holding more than it could give")
	}
	for range reads { // what it read before stopping, then closed
	}
}

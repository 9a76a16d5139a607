package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/go-git/go-git/v5/plumbing"
)

// After git gc packs memory, a write reads the packed trees it builds on
// with git cat-file; what it reads is what go-git reads, concurrent reads
// share the one process, and Close stops it.
func TestWritesOnPackedMemoryReadWithCatFile(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	r := open(t, dir)
	for i := range 20 {
		file := File{fmt.Sprintf("entries/%02x/e%d.json", i%4, i), []byte(fmt.Sprint("entry ", i))}
		if _, _, err := r.Append(ctx, "refs/synaptic/memory", []File{file}, sig, "save"); err != nil {
			t.Fatal(err)
		}
	}
	testrepo.Git(t, dir, "gc", "--quiet", "--prune=now")
	tip, _ := r.Tip("refs/synaptic/memory")
	if r.loose(tip) {
		t.Fatal("git gc left the tip loose")
	}
	root, err := r.CommitTree(tip)
	if err != nil {
		t.Fatal(err)
	}
	if r.st.cat.cmd == nil {
		t.Fatal("a packed commit was not read with git cat-file")
	}
	viaCat, err := r.smallRead(root)
	if err != nil {
		t.Fatal(err)
	}
	viaGoGit, err := r.st.EncodedObject(plumbing.AnyObject, root)
	if err != nil || viaCat.Type() != viaGoGit.Type() || viaCat.Size() != viaGoGit.Size() || viaCat.Hash() != root {
		t.Fatalf("cat-file read %v %d %s, go-git %v %v", viaCat.Type(), viaCat.Size(), viaCat.Hash(), viaGoGit, err)
	}
	// readers share the one process; writers, one Repo each as separate
	// processes would be, each read packed trees with their own
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			obj, err := r.smallRead(root)
			if err == nil && obj.Hash() != root {
				err = fmt.Errorf("read %s as %s", root, obj.Hash())
			}
			errs <- err
		}()
		go func() {
			defer wg.Done()
			wr, err := Open(dir)
			if err != nil {
				errs <- err
				return
			}
			defer wr.Close()
			file := File{fmt.Sprintf("entries/%02x/w%d.json", w%4, w), []byte(fmt.Sprint("writer ", w))}
			_, _, err = wr.Append(ctx, "refs/synaptic/memory", []File{file}, sig, "concurrent save")
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	tip, _ = r.Tip("refs/synaptic/memory")
	all, err := r.Diff(ZeroHash, tip)
	if err != nil || len(all) != 28 {
		t.Fatalf("after the writes on packed memory: %d files, %v", len(all), err)
	}
	testrepo.Git(t, dir, "fsck", "--strict", "--no-progress")
	r.Close()
	if r.st.cat.cmd != nil {
		t.Fatal("Close left git cat-file running")
	}
}

// A packed read that cat-file cannot answer (git gone from the object
// directory's view, or the object missing) is read by go-git instead.
func TestSmallReadFallsBackToGoGit(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	r := open(t, dir)
	c, _, err := r.Append(ctx, "refs/synaptic/memory", []File{{"entries/aa/a.json", []byte("a")}}, sig, "one")
	if err != nil {
		t.Fatal(err)
	}
	testrepo.Git(t, dir, "gc", "--quiet")
	r.st.cat = &catFile{gitDir: t.TempDir()} // not a repository: cat-file fails
	if _, err := r.CommitTree(c); err != nil {
		t.Fatalf("a packed commit with cat-file failing: %v", err)
	}
	if !r.st.cat.broken {
		t.Fatal("cat-file failed and was not set aside")
	}
	if _, err := r.smallRead(NewHash("0123456789012345678901234567890123456789")); !errors.Is(err, plumbing.ErrObjectNotFound) {
		t.Fatalf("a missing object: %v", err)
	}
}

// Stopping cat-file while it is still writing an answer (a read that
// failed midway) does not wait for it forever.
func TestCatFileStopsMidAnswer(t *testing.T) {
	dir := testrepo.NewRepo(t)
	r := open(t, dir)
	big, err := r.WriteBlob(bytes.Repeat([]byte("memory "), 200_000)) // beyond a pipe's buffer
	if err != nil {
		t.Fatal(err)
	}
	c := &catFile{gitDir: filepath.Join(dir, ".git")}
	if err := c.start(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c.in, big.String()+"\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.out.ReadString('\n'); err != nil { // the header; the content is left unread
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for cat-file to finish writing an answer nobody reads")
	}
}

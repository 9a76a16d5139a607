package gitstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// go-git reads an object from a pack only after reading every pack index
// of the repository whole, and maps every offset in them to its hash on
// its first read of a packed object: a cost that grows with the objects
// in the repository and is paid once per process. After git gc packs a
// memory of 300k entries, that was 60 of a save's 100 ms (22 ms before
// gc), and about 200 ms at a million. git searches an index in place, so
// the few reads a write or a diff makes of packed trees and commits go to
// one git cat-file --batch per repository instead; loose objects (what
// this process and recent writes made) are still read by go-git, and
// bulk reads (a rebuild's blobs) still use go-git, whose per-process cost
// is then small beside theirs.

// catFile is a git cat-file --batch process, started on the first read
// and stopped by Close. Reads are serialised; after any failure it is
// stopped and every later read falls back to go-git.
type catFile struct {
	mu     sync.Mutex
	gitDir string
	cmd    *exec.Cmd
	in     io.WriteCloser
	pipe   io.ReadCloser // out reads it
	out    *bufio.Reader
	broken bool
}

// errCatFile says cat-file could not answer; the caller reads with go-git.
var errCatFile = fmt.Errorf("git cat-file: no answer")

// read returns object h, or plumbing.ErrObjectNotFound when git does not
// have it (the caller then looks again with go-git, which retries across
// a repack).
func (c *catFile) read(h Hash) (plumbing.EncodedObject, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken {
		return nil, errCatFile
	}
	if c.cmd == nil {
		if err := c.start(); err != nil {
			c.broken = true
			return nil, errCatFile
		}
	}
	obj, err := c.ask(h)
	if err != nil && err != plumbing.ErrObjectNotFound {
		c.stop()
		c.broken = true
	}
	return obj, err
}

func (c *catFile) start() error {
	cmd := exec.Command("git", "--git-dir="+c.gitDir, "cat-file", "--batch")
	cmd.Dir = c.gitDir
	cmd.Env = cleanEnv()
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	c.cmd, c.in, c.pipe, c.out = cmd, in, out, bufio.NewReaderSize(out, 64<<10)
	return nil
}

// ask sends one hash and reads git's answer: "<hash> <type> <size>\n"
// then the content and a newline, or "<hash> missing\n".
func (c *catFile) ask(h Hash) (plumbing.EncodedObject, error) {
	if _, err := io.WriteString(c.in, h.String()+"\n"); err != nil {
		return nil, err
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		return nil, err
	}
	f := strings.Fields(line)
	if len(f) == 2 && f[1] == "missing" && f[0] == h.String() {
		return nil, plumbing.ErrObjectNotFound
	}
	if len(f) != 3 || f[0] != h.String() {
		return nil, fmt.Errorf("git cat-file: unexpected answer %q", line)
	}
	typ, err := plumbing.ParseObjectType(f[1])
	if err != nil {
		return nil, err
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return nil, fmt.Errorf("git cat-file: bad size in %q", line)
	}
	data := make([]byte, size+1)
	if _, err := io.ReadFull(c.out, data); err != nil {
		return nil, err
	}
	if data[size] != '\n' {
		return nil, fmt.Errorf("git cat-file: object %s not followed by a newline", h)
	}
	obj := &packedObject{typ: typ, data: data[:size]}
	// what git sent must be what was asked for: a check of the pipe, not
	// of the object, which git verified; plain SHA-1, a third of go-git's
	// time with collision detection (0.64 ms on a save's directory of
	// 3,900 entries at a million), as treeHash
	if got := objectHash(typ, data[:size]); got != h {
		return nil, fmt.Errorf("git cat-file: object %s read back as %s", h, got)
	}
	return obj, nil
}

// packedObject is an object git cat-file read, its content in place (a
// plumbing.MemoryObject copies what it is written: two copies of each
// directory of 3,900 entries a save at a million entries reads, 250 KB
// each). It is read-only.
type packedObject struct {
	typ  plumbing.ObjectType
	data []byte
}

func (o *packedObject) Hash() plumbing.Hash           { return objectHash(o.typ, o.data) }
func (o *packedObject) Type() plumbing.ObjectType     { return o.typ }
func (o *packedObject) SetType(t plumbing.ObjectType) { o.typ = t }
func (o *packedObject) Size() int64                   { return int64(len(o.data)) }
func (o *packedObject) SetSize(int64)                 {}
func (o *packedObject) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.data)), nil
}
func (o *packedObject) Writer() (io.WriteCloser, error) {
	return nil, errors.New("an object read from a pack cannot be written")
}

// stop ends the process: closing its input makes it exit, and closing
// its output one it is still writing an answer to (after a read that
// failed midway).
func (c *catFile) stop() {
	if c.cmd == nil {
		return
	}
	c.in.Close()
	c.pipe.Close()
	c.cmd.Wait()
	c.cmd, c.in, c.pipe, c.out = nil, nil, nil, nil
}

// Close stops the process; a later read starts a new one.
func (c *catFile) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stop()
}

// loose reports whether h is a loose object of this repository.
func (r *Repo) loose(h Hash) bool {
	s := h.String()
	_, err := os.Stat(filepath.Join(r.commonDir, "objects", s[:2], s[2:]))
	return err == nil
}

// smallRead reads object h for a write or a diff: a loose one with go-git,
// a packed one with git cat-file, falling back to go-git (which looks
// again after a repack) when that cannot answer.
func (r *Repo) smallRead(h Hash) (plumbing.EncodedObject, error) {
	if !r.loose(h) {
		if obj, err := r.st.cat.read(h); err == nil {
			return obj, nil
		}
	}
	return r.st.EncodedObject(plumbing.AnyObject, h)
}

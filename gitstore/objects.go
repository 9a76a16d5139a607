package gitstore

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// ErrConflict is returned by CompareAndSwap when the ref moved.
var ErrConflict = errors.New("ref moved concurrently")

// HasObject reports whether object h is present.
func (r *Repo) HasObject(h Hash) bool {
	return r.st.HasEncodedObject(h) == nil
}

// WriteBlob stores data as a blob.
func (r *Repo) WriteBlob(data []byte) (Hash, error) {
	obj := r.st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return ZeroHash, err
	}
	return r.store(obj, "blob")
}

// store writes an encoded object loose. git gc removes empty object
// fan-out directories, and one can vanish between the store creating it
// and renaming the object into it: that is tried again.
func (r *Repo) store(obj plumbing.EncodedObject, kind string) (Hash, error) {
	return r.storeAs(obj, obj.Hash(), kind)
}

// storeAs is store for an object whose hash h the caller computed.
func (r *Repo) storeAs(obj plumbing.EncodedObject, h Hash, kind string) (Hash, error) {
	err := r.writeLoose(obj, h)
	for try := 0; errors.Is(err, fs.ErrNotExist) && try < 3; try++ {
		err = r.writeLoose(obj, h)
	}
	if err != nil {
		return ZeroHash, fmt.Errorf("write %s: %w", kind, err)
	}
	return h, nil
}

// writeLoose writes obj, whose hash is h, as a loose object, compressed as
// git compresses loose objects (core.looseCompression's default, zlib's
// best speed: go-git's level 6 took 10 of the 21 ms of a save at a
// million entries, most of it on the directory tree of 3,900 entries),
// but for a large tree (storedTree). An object already there is
// freshened instead, as git does, so that a git gc running now does not
// prune it as old and unreachable.
func (r *Repo) writeLoose(obj plumbing.EncodedObject, h Hash) error {
	hex := h.String()
	dir := filepath.Join(r.commonDir, "objects", hex[:2])
	final := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(final); err == nil {
		now := time.Now()
		os.Chtimes(final, now, now) // read-only objects: best effort, as git's
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return err
	}
	tmp := f.Name()
	pool := &zlibFast
	if obj.Type() == plumbing.TreeObject && obj.Size() >= storedTree {
		pool = &zlibStored
	}
	zw := pool.Get().(*zlib.Writer)
	defer pool.Put(zw)
	zw.Reset(f)
	rd, err := obj.Reader()
	if err == nil {
		fmt.Fprintf(zw, "%s %d\x00", obj.Type(), obj.Size())
		_, err = io.Copy(zw, rd)
		rd.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o444)
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// zlibFast and zlibStored keep the zlib writers writeLoose compresses
// with, at best speed and without compression: a new one allocates its
// compressor (about a megabyte) on its first write, which was a fifth of a
// save from the command line, mostly in page faults.
var (
	zlibFast   = sync.Pool{New: func() any { return newZlib(zlib.BestSpeed) }}
	zlibStored = sync.Pool{New: func() any { return newZlib(zlib.NoCompression) }}
)

func newZlib(level int) *zlib.Writer {
	zw, _ := zlib.NewWriterLevel(io.Discard, level) // a valid level: no error
	return zw
}

// storedTree is the size from which a tree is written without
// compression (zlib's stored blocks, core.looseCompression=0 in git's
// terms): a tree is mostly object ids and hex names, which zlib shrinks
// by 30% (the directory of 3,900 entries a save rewrites at a million
// entries: 254 KB to 176 KB) at 2.9 ms to write and 1.7 ms to read it
// back, against 0.25 and 0.1 ms stored. git gc packs them as ever.
const storedTree = 32 << 10

// packThreshold is the batch size from which blobs are written as one pack
// instead of loose objects: a file per object costs a temp file and a
// rename each, which dominated bulk imports.
const packThreshold = 64

// writeBlobs stores each file's data and maps its path to the blob. A
// batch written as a pack is guarded by a .keep file until release is
// called (after the ref points at it): git repack -a -d drops packed
// objects that nothing references yet, and keeps the packs that have one.
func (r *Repo) writeBlobs(files []File) (blobs map[string]Hash, release func(), err error) {
	blobs = make(map[string]Hash, len(files))
	release = func() {}
	if len(files) < packThreshold {
		for _, f := range files {
			h, err := r.WriteBlob(f.Data)
			if err != nil {
				return nil, release, err
			}
			blobs[f.Path] = h
		}
		return blobs, release, nil
	}
	mem := memory.NewStorage()
	var hashes []Hash
	for _, f := range files {
		obj := mem.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, err := obj.Writer()
		if err != nil {
			return nil, release, err
		}
		w.Write(f.Data)
		w.Close()
		h, err := mem.SetEncodedObject(obj)
		if err != nil {
			return nil, release, err
		}
		if _, dup := blobs[f.Path]; !dup {
			hashes = append(hashes, h)
		}
		blobs[f.Path] = h
	}
	// Encode in memory first: the pack's name is its checksum, so the
	// .keep can exist before the pack does, leaving repack no window.
	var buf bytes.Buffer
	name, err := packfile.NewEncoder(&buf, mem, false).Encode(hashes, 0)
	if err != nil {
		return nil, release, fmt.Errorf("write pack: %w", err)
	}
	r.removeStaleKeeps()
	keep := filepath.Join(r.commonDir, "objects", "pack", "pack-"+name.String()+".keep")
	if err := os.MkdirAll(filepath.Dir(keep), 0o755); err != nil {
		return nil, release, fmt.Errorf("write pack: %w", err)
	}
	if err := os.WriteFile(keep, []byte(keepMarker), 0o644); err != nil {
		return nil, release, fmt.Errorf("write pack: %w", err)
	}
	release = func() { os.Remove(keep) }
	pw, err := r.st.PackfileWriter()
	if err == nil {
		if _, err = buf.WriteTo(pw); err != nil {
			pw.Close()
		} else {
			err = pw.Close()
		}
	}
	if err != nil {
		release()
		return nil, func() {}, fmt.Errorf("write pack: %w", err)
	}
	return blobs, release, nil
}

// keepMarker is the content of the .keep files writeBlobs makes, so that
// one left by a killed process can be told from the user's own.
const keepMarker = "git-synaptic: objects not referenced yet\n"

// removeStaleKeeps deletes .keep files of ours that a killed process left:
// once an hour has passed its ref update has long succeeded or failed.
func (r *Repo) removeStaleKeeps() {
	keeps, _ := filepath.Glob(filepath.Join(r.commonDir, "objects", "pack", "pack-*.keep"))
	for _, k := range keeps {
		fi, err := os.Stat(k)
		if err != nil || time.Since(fi.ModTime()) < time.Hour {
			continue
		}
		if b, err := os.ReadFile(k); err == nil && string(b) == keepMarker {
			os.Remove(k)
		}
	}
}

// ReadBlob reads blob h, refusing other object types and blobs over max bytes.
func (r *Repo) ReadBlob(h Hash, max int64) ([]byte, error) {
	obj, err := r.st.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", h, err)
	}
	if obj.Type() != plumbing.BlobObject {
		return nil, fmt.Errorf("object %s is a %s, not a blob", h, obj.Type())
	}
	if obj.Size() > max {
		return nil, fmt.Errorf("blob %s is %d bytes, over the %d-byte limit", h, obj.Size(), max)
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", h, err)
	}
	defer rd.Close()
	return io.ReadAll(io.LimitReader(rd, max+1))
}

// CommitTree returns the root tree of commit c (ZeroHash for ZeroHash), or a
// clear error naming what c really is.
func (r *Repo) CommitTree(c Hash) (Hash, error) {
	if c.IsZero() {
		return ZeroHash, nil
	}
	obj, err := r.smallRead(c)
	if err != nil {
		return ZeroHash, fmt.Errorf("object %s: %w", c, err)
	}
	if obj.Type() != plumbing.CommitObject {
		return ZeroHash, fmt.Errorf("object %s is a %s, not a commit", c, obj.Type())
	}
	cm, err := object.DecodeCommit(r.st, obj)
	if err != nil {
		return ZeroHash, fmt.Errorf("commit %s: %w", c, err)
	}
	return cm.TreeHash, nil
}

// Signature is who made a commit and when.
type Signature struct {
	Name, Email string
	When        time.Time
}

// ParseIdent splits "Name <email>" into a signature at time when.
func ParseIdent(ident string, when time.Time) Signature {
	name, email := ident, ""
	if i := strings.LastIndex(ident, "<"); i >= 0 {
		name = strings.TrimSpace(ident[:i])
		email = strings.Trim(ident[i:], "<> ")
	}
	return Signature{Name: name, Email: email, When: when}
}

func (r *Repo) writeCommit(tree Hash, parents []Hash, sig Signature, msg string) (Hash, error) {
	s := object.Signature{Name: sig.Name, Email: sig.Email, When: sig.When}
	c := &object.Commit{Author: s, Committer: s, Message: msg, TreeHash: tree, ParentHashes: parents}
	obj := r.st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return ZeroHash, err
	}
	return r.store(obj, "commit")
}

// CompareAndSwap points ref at newHash if it still points at old (ZeroHash:
// must not exist). It returns ErrConflict when the ref moved or is locked.
//
// It follows git's own lock-file protocol (create REF.lock exclusively,
// check the current value, write, rename over REF), so it is safe against
// concurrent git processes and a process killed at any point leaves the old
// value, never a torn one; and it costs no git process, which dominated a
// save.
func (r *Repo) CompareAndSwap(ctx context.Context, ref string, newHash, old Hash) error {
	if s, err := r.side(ref, true); err != nil || s != r {
		if err != nil {
			return err
		}
		return s.CompareAndSwap(ctx, ref, newHash, old)
	}
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return fmt.Errorf("refusing to update %q: not a ref name", ref)
	}
	path := filepath.Join(r.commonDir, filepath.FromSlash(ref))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("update %s: %w", ref, err)
	}
	lock := path + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		if len(r.RemoveStaleLocks(ref)) > 0 {
			return fmt.Errorf("%w: removed the stale lock %s", ErrConflict, lock)
		}
		return fmt.Errorf("%w: %s is locked by another process", ErrConflict, ref)
	}
	if err != nil {
		return fmt.Errorf("update %s: %w", ref, err)
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(lock)
		}
	}()
	cur, err := r.Tip(ref)
	if err != nil {
		return fmt.Errorf("update %s: %w", ref, err)
	}
	if cur != old {
		return fmt.Errorf("%w: %s is at %s but expected %s", ErrConflict, ref, cur, old)
	}
	if _, err := f.WriteString(newHash.String() + "\n"); err != nil {
		return fmt.Errorf("update %s: %w", ref, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("update %s: %w", ref, err)
	}
	if err := os.Rename(lock, path); err != nil {
		return fmt.Errorf("update %s: %w", ref, err)
	}
	done = true
	return nil
}

// File is a path in a memory tree and its content.
type File struct {
	Path string
	Data []byte
}

// casRetry runs attempt until it succeeds, fails with an error other than
// ErrConflict, or the deadline passes. Backoff is jittered so concurrent
// writers spread out. An object found missing (git repacking under us
// faster than a read could follow) is retried a few times from scratch;
// if it stays missing, the error says the write can be tried again.
func casRetry(ctx context.Context, what string, attempt func() error) error {
	deadline := time.Now().Add(2 * time.Minute)
	backoff := time.Millisecond
	missing := 0
	for n := 1; ; n++ {
		err := attempt()
		if IsMissing(err) {
			if missing++; missing > 5 {
				return fmt.Errorf("%w (nothing was written; if git gc or repack was running, try again)", err)
			}
		} else if err == nil || !errors.Is(err, ErrConflict) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: gave up after %d attempts: %w", what, n, err)
		}
		sleep := backoff/2 + time.Duration(rand.Int64N(int64(backoff)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(sleep):
		}
		if backoff < 50*time.Millisecond {
			backoff *= 2
		}
	}
}

// Append adds files to the tree at ref's tip in a new commit and moves the ref
// with compare-and-swap, retrying on concurrent updates. It returns the new
// commit and its parent (ZeroHash for the first). Files already present at
// the same path are replaced.
func (r *Repo) Append(ctx context.Context, ref string, files []File, sig Signature, msg string) (commit, parent Hash, err error) {
	if s, err := r.side(ref, true); err != nil || s != r {
		if err != nil {
			return ZeroHash, ZeroHash, err
		}
		return s.Append(ctx, ref, files, sig, msg)
	}
	blobs, release, err := r.writeBlobs(files)
	if err != nil {
		return ZeroHash, ZeroHash, err
	}
	defer release()
	err = casRetry(ctx, "update "+ref, func() error {
		tip, err := r.Tip(ref)
		if err != nil {
			return err
		}
		c, err := r.commitOnto(tip, blobs, sig, msg)
		if err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		if err := r.CompareAndSwap(ctx, ref, c, tip); err != nil {
			return err
		}
		commit, parent = c, tip
		return nil
	})
	if err != nil {
		return commit, parent, err
	}
	if err := r.heal(ctx, commit, parent, files, sig, msg); err != nil {
		return commit, parent, fmt.Errorf("%s moved to %s, but: %w", ref, commit, err)
	}
	return commit, parent, nil
}

// commitOnto writes a commit whose tree is parent's (empty when parent is
// zero) with blobs put in, and whose one parent is parent.
func (r *Repo) commitOnto(parent Hash, blobs map[string]Hash, sig Signature, msg string) (Hash, error) {
	base, err := r.CommitTree(parent)
	if err != nil {
		return ZeroHash, err
	}
	tree, err := r.putFiles(base, blobs)
	if err != nil {
		return ZeroHash, err
	}
	var parents []Hash
	if !parent.IsZero() {
		parents = []Hash{parent}
	}
	return r.writeCommit(tree, parents, sig, msg)
}

// CommitInfo returns the author ("Name <email>") and author time of commit c.
func (r *Repo) CommitInfo(c Hash) (string, time.Time, error) {
	cm, err := object.GetCommit(r.st, c)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("commit %s: %w", c, err)
	}
	return cm.Author.Name + " <" + cm.Author.Email + ">", cm.Author.When, nil
}

// SetRef points ref at h unconditionally (for remote-tracking refs only).
func (r *Repo) SetRef(ctx context.Context, ref string, h Hash) error {
	if s, err := r.side(ref, true); err != nil || s != r {
		if err != nil {
			return err
		}
		return s.SetRef(ctx, ref, h)
	}
	_, err := r.run(ctx, nil, nil, "update-ref", ref, h.String())
	return err
}

// NewHash parses a 40-digit hex object id.
func NewHash(s string) Hash { return plumbing.NewHash(s) }

// Unborn reports whether HEAD points at a branch with no commit yet.
func (r *Repo) Unborn() bool {
	h, err := r.Head()
	return err != nil || h.IsZero()
}

// Head is the commit HEAD points at, read from git's files without
// running git; zero on an unborn branch.
func (r *Repo) Head() (Hash, error) {
	b, err := os.ReadFile(filepath.Join(r.gitDir, "HEAD"))
	if err != nil {
		return ZeroHash, fmt.Errorf("read HEAD: %w", err)
	}
	head := strings.TrimSpace(string(b))
	if ref, isRef := strings.CutPrefix(head, "ref: "); isRef {
		return r.Tip(ref)
	}
	return plumbingHash(head)
}

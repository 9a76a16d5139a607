package gitstore

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/git-synaptic/git-synaptic/internal/offheap"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Trees: memory commits' trees read (and kept a while), written, with
// files put in, and compared.

func (r *Repo) readTree(h Hash) ([]object.TreeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	if entries, ok := r.trees.get(h); ok {
		return entries, nil
	}
	obj, err := r.smallRead(h)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	if obj.Type() != plumbing.TreeObject {
		return nil, fmt.Errorf("object %s is a %s, not a tree", h, obj.Type())
	}
	data, err := objectData(obj)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	entries, err := decodeTreeData(data)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	r.trees.put(h, entries, data)
	return entries, nil
}

// objectData is obj's content (for an object read from a pack, the
// object's own: not to be changed).
func objectData(obj plumbing.EncodedObject) ([]byte, error) {
	if p, ok := obj.(*packedObject); ok {
		return p.data, nil
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	data := make([]byte, obj.Size())
	_, err = io.ReadFull(rd, data)
	rd.Close()
	return data, err
}

// decodeTreeData parses a tree's content as object.Tree's Decode does,
// with the same checks and modes, from its bytes in place: Decode reads
// each entry's mode and name through a bufio.Reader into strings of their
// own, 1.4 to 3.6 ms of a save at a million entries for the directory of
// 3,900 it rewrites.
func decodeTreeData(data []byte) ([]object.TreeEntry, error) {
	// room for entries of memory's size: a mode, a space, a file name of
	// about 40 bytes, a NUL and an object id (more are appended as needed)
	entries := make([]object.TreeEntry, 0, len(data)/(len("100644 ")+1+len(Hash{})+41))
	err := eachTreeEntry(data, func(mode filemode.FileMode, name []byte, id Hash) {
		entries = append(entries, object.TreeEntry{Name: string(name), Mode: mode, Hash: id})
	})
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// treeDirs returns the object ids of the directories a tree's content
// names, without reading the names into strings.
func treeDirs(data []byte) ([]Hash, error) {
	var dirs []Hash
	err := eachTreeEntry(data, func(mode filemode.FileMode, _ []byte, id Hash) {
		if mode == filemode.Dir {
			dirs = append(dirs, id)
		}
	})
	if err != nil {
		return nil, err
	}
	return dirs, nil
}

// eachTreeEntry calls f with each entry of a tree's content, in order:
// its mode as object.Tree's Decode gives it, its name (within data) and
// its object id; it makes Decode's checks.
func eachTreeEntry(data []byte, f func(mode filemode.FileMode, name []byte, id Hash)) error {
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return fmt.Errorf("%w: missing mode terminator", object.ErrMalformedTree)
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return fmt.Errorf("%w: malformed mode", object.ErrMalformedTree)
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 {
			return fmt.Errorf("%w: missing filename terminator", object.ErrMalformedTree)
		}
		if nul == 0 {
			return fmt.Errorf("%w: empty filename", object.ErrMalformedTree)
		}
		name := data[:nul]
		data = data[nul+1:]
		var id Hash
		if len(data) < len(id) {
			return fmt.Errorf("%w: truncated object id", object.ErrMalformedTree)
		}
		copy(id[:], data)
		data = data[len(id):]
		f(canonicalMode(filemode.FileMode(mode)), name, id)
	}
	return nil
}

// canonicalMode is the mode object.Tree's Decode gives an entry of mode m.
func canonicalMode(m filemode.FileMode) filemode.FileMode {
	switch m & 0o170000 {
	case 0o040000:
		return filemode.Dir
	case 0o100000:
		if m&0o111 != 0 {
			return filemode.Executable
		}
		return filemode.Regular
	case 0o120000:
		return filemode.Symlink
	default:
		return filemode.Submodule
	}
}

func (r *Repo) writeTree(entries []object.TreeEntry) (Hash, error) {
	sort.Slice(entries, func(i, j int) bool { return treeKey(entries[i]) < treeKey(entries[j]) })
	data, err := encodeTree(entries)
	if err != nil {
		return ZeroHash, err
	}
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.TreeObject)
	obj.Write(data) // appends to memory: no error
	var h Hash
	if plainNames(entries) {
		h = treeHash(data)
	} else {
		h = obj.Hash()
	}
	h, err = r.storeAs(obj, h, "tree")
	if err == nil {
		r.trees.put(h, entries, data)
	}
	return h, err
}

// treeHash is git's id of the tree object that holds data, by
// crypto/sha1: go-git's SHA-1, which detects collision attacks, ran at a
// third of its speed on the directory of 3,900 entries a save rewrites
// at a million entries (273 KB: 0.64 ms against 0.19). Both give the
// same id but for the blocks such an attack crafts: writeTree uses it
// for trees of plain names only (plainNames), which with their modes and
// ids (computed with that detection) leave no run of bytes an attacker
// chooses.
func treeHash(data []byte) Hash { return objectHash(plumbing.TreeObject, data) }

// objectHash is git's id of the object of type typ that holds data, by
// crypto/sha1 (see treeHash).
func objectHash(typ plumbing.ObjectType, data []byte) Hash {
	h := sha1.New()
	h.Write(strconv.AppendInt([]byte(typ.String()+" "), int64(len(data)), 10))
	h.Write([]byte{0})
	h.Write(data)
	return Hash(h.Sum(nil))
}

// plainNames reports whether every name in entries is made of lowercase
// letters, digits and dots, as the memory format's are: a teammate's
// tree merged in may name files as it likes.
func plainNames(entries []object.TreeEntry) bool {
	for _, e := range entries {
		for i := 0; i < len(e.Name); i++ {
			if !plainByte[e.Name[i]] {
				return false
			}
		}
	}
	return true
}

// plainByte says which bytes plainNames allows. A table, not comparisons:
// in hex names a letter follows a digit at random, and the comparisons'
// branches, guessed wrong half the time, took 0.5 ms of a save at a
// million entries over its directory of 3,900 names (0.07 ms so).
var plainByte = func() (t [256]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.'
	}
	return t
}()

// encodeTree writes entries, in tree order, as git's tree object holds
// them: "<mode in octal> <name>\0<hash>" each. object.Tree's Encode does
// the same with a fmt.Fprintf an entry: 1 ms of a save at a million
// entries, for its directory of 3,900.
func encodeTree(entries []object.TreeEntry) ([]byte, error) {
	n := 0
	for _, e := range entries {
		n += len("100644 ") + len(e.Name) + 1 + len(e.Hash)
	}
	data := make([]byte, 0, n)
	for _, e := range entries {
		if e.Name == "" || strings.IndexByte(e.Name, 0) >= 0 {
			return nil, fmt.Errorf("malformed file name %q in a tree", e.Name)
		}
		data = strconv.AppendUint(data, uint64(e.Mode), 8)
		data = append(data, ' ')
		data = append(data, e.Name...)
		data = append(data, 0)
		data = append(data, e.Hash[:]...)
	}
	return data, nil
}

// treeCache keeps the trees last read or written: the last few parsed,
// and up to treeCacheBytes of them as git stores them, off Go's heap
// (offHeap), parsed again when asked for (0.1 ms for a directory of 3,900
// entries, against 1.8-2.3 ms to read it from a pack through git
// cat-file). A save at a million entries reads its directory of 3,900
// entries to change it and writes the new one; then heal and the cache's
// Diff read both again (8.5 ms of a 21 ms save, parsed each time). A
// tree's content never changes under its hash, and whether the object is
// still there (git gc) is asked apart (HasEncodedObject), never of this
// cache. A version a save replaced (putFiles) is let go at once, so that
// what is kept is what the next saves start from. It is safe for
// concurrent use; callers get their own copy of the entries. release
// gives back what it keeps.
type treeCache struct {
	mu     sync.Mutex
	byHash map[Hash][]object.TreeEntry
	order  []Hash // oldest first
	// raw holds trees' content; rawOrder is least recently used first,
	// and rawSize their bytes.
	raw      map[Hash]keptTree
	rawOrder []Hash
	rawSize  int
	limit    int // of rawSize (0: treeCacheBytes)
}

// keptTree is a tree's content, off the heap until free is called, and
// whether it names directories.
type keptTree struct {
	data []byte
	free func()
	dirs bool
}

// treeCacheSize is how many trees a treeCache keeps parsed: a save
// touches four (the root and one directory, before and after).
const treeCacheSize = 8

// treeCacheBytes bounds the trees a treeCache keeps as stored: the 256
// directories of a million entries take 65 MB, which the warm process
// reads ahead between requests (Repo.ReadTrees), so that a save finds its
// directory read.
const treeCacheBytes = 96 << 20

func (c *treeCache) get(h Hash) ([]object.TreeEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if entries, ok := c.byHash[h]; ok {
		return slices.Clone(entries), true
	}
	entries, ok := c.decodeKept(h)
	if !ok {
		return nil, false
	}
	c.used(h)
	c.putParsed(h, entries)
	return entries, true
}

// decodeKept parses the content kept of h. It is called with mu held:
// the content may be let go (and its memory unmapped) once mu is free.
func (c *treeCache) decodeKept(h Hash) ([]object.TreeEntry, bool) {
	st, ok := c.raw[h]
	if !ok {
		return nil, false
	}
	entries, err := decodeTreeData(st.data) // its strings are copies
	return entries, err == nil
}

// keptDirs returns the directories tree h names, when its content is
// kept.
func (c *treeCache) keptDirs(h Hash) (dirs []Hash, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.raw[h]
	if !ok || !st.dirs {
		return nil, ok
	}
	dirs, err := treeDirs(st.data)
	return dirs, err == nil
}

// full reports whether the trees kept as stored take three quarters of
// treeCacheBytes or more: reading ahead stops there, leaving room for
// the trees saves write.
func (c *treeCache) full() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rawSize >= c.bytes()/4*3
}

// bytes is how much of trees' content c keeps at most.
func (c *treeCache) bytes() int {
	if c.limit > 0 {
		return c.limit
	}
	return treeCacheBytes
}

// used moves h, whose content is kept, to the most recently used end.
func (c *treeCache) used(h Hash) {
	if i := slices.Index(c.rawOrder, h); i >= 0 {
		c.rawOrder = append(slices.Delete(c.rawOrder, i, i+1), h)
	}
}

// put keeps entries parsed, and data, the tree's content, when given.
func (c *treeCache) put(h Hash, entries []object.TreeEntry, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if data != nil {
		c.keep(h, data, hasDirs(entries))
	}
	c.putParsed(h, entries)
}

func (c *treeCache) putParsed(h Hash, entries []object.TreeEntry) {
	if _, ok := c.byHash[h]; ok {
		return
	}
	if c.byHash == nil {
		c.byHash = map[Hash][]object.TreeEntry{}
	}
	if len(c.order) == treeCacheSize {
		delete(c.byHash, c.order[0])
		c.order = c.order[1:]
	}
	c.byHash[h] = slices.Clone(entries)
	c.order = append(c.order, h)
}

// keepStored is keep for a tree read ahead, not parsed (ReadTrees).
func (c *treeCache) keepStored(h Hash, data []byte, dirs bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keep(h, data, dirs)
}

// keep keeps a copy of data, the content of tree h, making room for it
// by letting the least recently used go. It is called with mu held.
func (c *treeCache) keep(h Hash, data []byte, dirs bool) {
	if _, ok := c.raw[h]; ok {
		c.used(h)
		return
	}
	if len(data) > c.bytes()/4 {
		return
	}
	if c.raw == nil {
		c.raw = map[Hash]keptTree{}
	}
	for len(c.rawOrder) > 0 && c.rawSize+len(data) > c.bytes() {
		c.let(c.rawOrder[0])
	}
	// kept apart from the heap: live data that never changes and holds
	// no pointers (65 MB at a million entries)
	kept, free := offheap.Alloc(len(data))
	copy(kept, data)
	c.raw[h] = keptTree{data: kept, free: free, dirs: dirs}
	c.rawOrder = append(c.rawOrder, h)
	c.rawSize += len(data)
}

// let lets the content kept of h go. It is called with mu held.
func (c *treeCache) let(h Hash) {
	st := c.raw[h]
	c.rawSize -= len(st.data)
	delete(c.raw, h)
	if i := slices.Index(c.rawOrder, h); i >= 0 {
		c.rawOrder = slices.Delete(c.rawOrder, i, i+1)
	}
	st.free()
}

// replaced lets go of the content kept of h, a tree a newer version
// replaced.
func (c *treeCache) replaced(h Hash) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.raw[h]; ok {
		c.let(h)
	}
}

// release lets go of every tree kept.
func (c *treeCache) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for h := range c.raw {
		c.let(h)
	}
}

// hasDirs reports whether entries name a directory.
func hasDirs(entries []object.TreeEntry) bool {
	return slices.ContainsFunc(entries, func(e object.TreeEntry) bool { return e.Mode == filemode.Dir })
}

// treeKey is git's tree ordering: directories sort as if named "name/".
func treeKey(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

// putFiles returns a tree equal to base with each path set to its blob.
func (r *Repo) putFiles(base Hash, files map[string]Hash) (Hash, error) {
	entries, err := r.readTree(base)
	if err != nil {
		return ZeroHash, err
	}
	// entries by name: a scan for a few files, a map for more (making
	// one of the 3,900 names of a directory at a million entries took
	// 0.9 ms of CPU a save in a profile, for the one file it puts)
	var byName map[string]int
	index := func(name string) (int, bool) {
		if byName == nil && len(files) > 4 {
			byName = make(map[string]int, len(entries))
			for i, e := range entries {
				byName[e.Name] = i
			}
		}
		if byName != nil {
			i, ok := byName[name]
			return i, ok
		}
		i := slices.IndexFunc(entries, func(e object.TreeEntry) bool { return e.Name == name })
		return i, i >= 0
	}
	add := func(e object.TreeEntry) {
		if byName != nil {
			byName[e.Name] = len(entries)
		}
		entries = append(entries, e)
	}
	sub := map[string]map[string]Hash{}
	for p, h := range files {
		name, rest, isDir := strings.Cut(p, "/")
		if !isDir {
			if i, ok := index(name); ok {
				entries[i] = object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h}
			} else {
				add(object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
			}
			continue
		}
		if sub[name] == nil {
			sub[name] = map[string]Hash{}
		}
		sub[name][rest] = h
	}
	for name, fs := range sub {
		var old Hash
		i, ok := index(name)
		if ok && entries[i].Mode == filemode.Dir {
			old = entries[i].Hash
		}
		h, err := r.putFiles(old, fs)
		if err != nil {
			return ZeroHash, err
		}
		if ok {
			entries[i] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
		} else {
			add(object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
	}
	h, err := r.writeTree(entries)
	if err == nil && h != base {
		// the version replaced stays parsed a while (heal and the cache's
		// catching up read it again), but its stored copy goes: the next
		// save starts from the new one, and stale versions, each just
		// used, would push the directories no save touched lately out
		r.trees.replaced(base)
	}
	return h, err
}

// Change is one file that differs between two memory trees.
type Change struct {
	Path    string
	Hash    Hash // new blob (old blob when Deleted)
	Mode    uint32
	Deleted bool
}

// Diff lists the files that differ between the trees of two commits
// (old may be ZeroHash: everything in new is added). Unchanged subtrees are
// skipped by hash, so the cost follows the size of the change.
func (r *Repo) Diff(oldCommit, newCommit Hash) ([]Change, error) {
	ot, err := r.CommitTree(oldCommit)
	if err != nil {
		return nil, err
	}
	nt, err := r.CommitTree(newCommit)
	if err != nil {
		return nil, err
	}
	var out []Change
	err = r.diffTrees("", ot, nt, &out)
	return out, err
}

func (r *Repo) diffTrees(prefix string, a, b Hash, out *[]Change) error {
	if a == b {
		return nil
	}
	ae, err := r.readTree(a)
	if err != nil {
		return err
	}
	be, err := r.readTree(b)
	if err != nil {
		return err
	}
	return pairEntries(ae, be, func(old, e *object.TreeEntry) error {
		switch {
		case old != nil && e != nil && old.Hash == e.Hash && old.Mode == e.Mode:
			return nil
		case e == nil && old.Mode == filemode.Dir:
			return r.diffTrees(prefix+old.Name+"/", old.Hash, ZeroHash, out)
		case e == nil:
			*out = append(*out, Change{Path: prefix + old.Name, Hash: old.Hash, Mode: uint32(old.Mode), Deleted: true})
			return nil
		case e.Mode == filemode.Dir:
			var oh Hash
			if old != nil {
				oh = old.Hash
			}
			return r.diffTrees(prefix+e.Name+"/", oh, e.Hash, out)
		default:
			*out = append(*out, Change{Path: prefix + e.Name, Hash: e.Hash, Mode: uint32(e.Mode)})
			return nil
		}
	})
}

// pairEntries calls f for each entry of trees a and b (old, then new),
// with the entry of the same name and kind (file or directory) in the
// other tree, or nil. A file and a directory of one name are two entries.
// Trees in git's order, as git and writeTree write them, are walked side
// by side: a map of the directory of 3,900 entries a save at a million
// entries rewrites took 0.6 ms, and a save compared it twice (heal, then
// the cache's Diff). Others (a tree git's fsck would call malformed) are
// matched by a map.
func pairEntries(a, b []object.TreeEntry, f func(old, new *object.TreeEntry) error) error {
	if inTreeOrder(a) && inTreeOrder(b) {
		i, j := 0, 0
		for i < len(a) || j < len(b) {
			order := -1 // a[i] first
			switch {
			case i == len(a):
				order = 1
			case j < len(b):
				order = strings.Compare(treeKey(a[i]), treeKey(b[j]))
			}
			var err error
			switch order {
			case -1:
				err = f(&a[i], nil)
				i++
			case 1:
				err = f(nil, &b[j])
				j++
			default:
				err = f(&a[i], &b[j])
				i, j = i+1, j+1
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	at := make(map[string]int, len(a))
	for i, e := range a {
		at[treeKey(e)] = i
	}
	paired := make([]bool, len(a))
	for j := range b {
		var old *object.TreeEntry
		if i, ok := at[treeKey(b[j])]; ok && !paired[i] {
			old, paired[i] = &a[i], true
		}
		if err := f(old, &b[j]); err != nil {
			return err
		}
	}
	for i := range a {
		if !paired[i] {
			if err := f(&a[i], nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// inTreeOrder reports whether entries are in git's tree order, each name
// once.
func inTreeOrder(entries []object.TreeEntry) bool {
	for i := 1; i < len(entries); i++ {
		if treeKey(entries[i-1]) >= treeKey(entries[i]) {
			return false
		}
	}
	return true
}

// RegularFile reports whether mode is a plain (possibly executable) file.
func RegularFile(mode uint32) bool {
	return filemode.FileMode(mode) == filemode.Regular || filemode.FileMode(mode) == filemode.Executable || filemode.FileMode(mode) == filemode.Deprecated
}

// ReadAhead reads the trees on the way to the directory of file p at
// ref's tip, so that an Append of p there finds them read (treeCache): a
// save at a million entries reads its directory of 3,900 entries from a
// pack, 2 ms, which a save does while it looks for near-duplicates. It is
// a hint: what it cannot read is left to the Append.
func (r *Repo) ReadAhead(ref, p string) {
	s, err := r.side(ref, false)
	if err != nil || s == nil {
		return
	}
	tip, err := s.Tip(ref)
	if err != nil || tip.IsZero() {
		return
	}
	h, err := s.CommitTree(tip)
	if err != nil {
		return
	}
	for _, name := range strings.Split(path.Dir(p), "/") {
		entries, err := s.readTree(h)
		i := slices.IndexFunc(entries, func(e object.TreeEntry) bool { return e.Name == name && e.Mode == filemode.Dir })
		if err != nil || i < 0 {
			return
		}
		h = entries[i].Hash
	}
	s.readTree(h) // a hint: a failure is the Append's to report
}

// ReadTrees reads up to n of the trees at ref's tip that its tree cache
// does not keep, the root's first, and reports whether more are left to
// read: the warm process reads a large memory's directories between
// requests, so that a save finds the one it changes read (at a million
// entries, 1.8-2.3 ms a save). It stops, reporting none left, once the
// cache is three quarters full (treeCacheBytes).
func (r *Repo) ReadTrees(ref string, n int) (more bool) {
	s, err := r.side(ref, false)
	if err != nil || s == nil {
		return false
	}
	tip, err := s.Tip(ref)
	if err != nil || tip.IsZero() {
		return false
	}
	root, err := s.CommitTree(tip)
	if err != nil {
		return false
	}
	for queue := []Hash{root}; len(queue) > 0; queue = queue[1:] {
		if s.trees.full() {
			return false
		}
		h := queue[0]
		dirs, ok := s.trees.keptDirs(h)
		if !ok {
			if n == 0 {
				return true
			}
			n--
			obj, err := s.smallRead(h)
			if err != nil || obj.Type() != plumbing.TreeObject {
				return false // a hint: a failure is the next reader's to report
			}
			data, err := objectData(obj)
			if err != nil {
				return false
			}
			if dirs, err = treeDirs(data); err != nil {
				return false
			}
			s.trees.keepStored(h, data, len(dirs) > 0)
		}
		queue = append(queue, dirs...)
	}
	return false
}

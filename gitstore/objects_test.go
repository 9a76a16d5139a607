package gitstore

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Objects are written loose as git writes them (zlib at best speed, read
// only) and read back by git; a tree read twice is the same, whatever the
// first reader did to its copy.
func TestObjectsAreWrittenAsGitWritesThem(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	r := open(t, dir)
	data := []byte(strings.Repeat("the billing worker retries with backoff\n", 200))
	c, _, err := r.Append(ctx, "refs/synaptic/memory", []File{{"entries/aa/a.json", data}, {"entries/bb/b.json", []byte("b")}}, sig, "one")
	if err != nil {
		t.Fatal(err)
	}
	blob := testrepo.Git(t, dir, "rev-parse", c.String()+":entries/aa/a.json")
	path := filepath.Join(dir, ".git", "objects", blob[:2], blob[2:])
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("the blob is not loose: %v", err)
	}
	if fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("loose object mode %v: git writes them read-only", fi.Mode())
	}
	raw, _ := os.ReadFile(path)
	if len(raw) < 2 || raw[0] != 0x78 || raw[1] != 0x01 { // zlib header: best speed
		t.Errorf("loose object header % x, want 78 01 (zlib at best speed, git's core.looseCompression)", raw[:min(2, len(raw))])
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(zr)
	if want := append([]byte("blob 8000\x00"), data...); !bytes.Equal(got, want) {
		t.Errorf("loose object holds %d bytes, want the header and the data (%d)", len(got), len(want))
	}
	if out := testrepo.Git(t, dir, "cat-file", "-p", blob); out != strings.TrimSuffix(string(data), "\n") {
		t.Errorf("git reads back %d bytes", len(out))
	}
	testrepo.Git(t, dir, "fsck", "--strict", "--no-progress")

	// writing it again freshens it (git gc judges age by it)
	old := time.Now().Add(-30 * 24 * time.Hour)
	os.Chtimes(path, old, old)
	if _, err := r.WriteBlob(data); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); time.Since(fi.ModTime()) > time.Hour {
		t.Errorf("an object written again kept its old time %v", fi.ModTime())
	}

	tree, err := r.CommitTree(c)
	if err != nil {
		t.Fatal(err)
	}
	first, err := r.readTree(tree)
	if err != nil || len(first) != 1 {
		t.Fatalf("root tree: %v %v", first, err)
	}
	first[0].Name = "changed by a caller"
	if again, _ := r.readTree(tree); again[0].Name != "entries" {
		t.Fatalf("a caller's change to a tree read reached the next read: %q", again[0].Name)
	}
}

// Trees are encoded and hashed as go-git (and git) encode and hash them, and a
// large one, written without compression, is read back by git and by this
// package, and passes git fsck.
func TestTreesAreWrittenAsGitReadsThem(t *testing.T) {
	entries := []object.TreeEntry{
		{Name: "a.json", Mode: filemode.Regular, Hash: plumbing.NewHash("1111111111111111111111111111111111111111")},
		{Name: "a", Mode: filemode.Dir, Hash: plumbing.NewHash("2222222222222222222222222222222222222222")},
		{Name: "run", Mode: filemode.Executable, Hash: plumbing.NewHash("3333333333333333333333333333333333333333")},
		{Name: "link", Mode: filemode.Symlink, Hash: plumbing.NewHash("4444444444444444444444444444444444444444")},
		{Name: "mod", Mode: filemode.Submodule, Hash: plumbing.NewHash("5555555555555555555555555555555555555555")},
	}
	sort.Sort(object.TreeEntrySorter(entries))
	want := &plumbing.MemoryObject{}
	if err := (&object.Tree{Entries: entries}).Encode(want); err != nil {
		t.Fatal(err)
	}
	wr, _ := want.Reader()
	wantData, _ := io.ReadAll(wr)
	got, err := encodeTree(entries)
	if err != nil || !bytes.Equal(got, wantData) {
		t.Fatalf("encodeTree:\n%q %v\nwant\n%q", got, err, wantData)
	}
	if h, want := treeHash(got), plumbing.ComputeHash(plumbing.TreeObject, wantData); h != want {
		t.Fatalf("treeHash %s, go-git's hash %s", h, want)
	}
	if !plainNames(entries) || plainNames([]object.TreeEntry{{Name: "Not Plain"}}) || plainNames([]object.TreeEntry{{Name: "a\xffb"}}) {
		t.Error("plainNames takes lowercase letters, digits and dots only")
	}
	for c := range 256 {
		plain := strings.ContainsRune("abcdefghijklmnopqrstuvwxyz0123456789.", rune(c))
		if got := plainNames([]object.TreeEntry{{Name: "a1." + string([]byte{byte(c)})}}); got != plain {
			t.Errorf("plainNames of a name with byte %#x: %v, want %v", c, got, plain)
		}
	}
	for _, bad := range []string{"", "a\x00b"} {
		if _, err := encodeTree([]object.TreeEntry{{Name: bad, Mode: filemode.Regular}}); err == nil {
			t.Errorf("a tree entry named %q was encoded", bad)
		}
	}

	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	r := open(t, dir)
	files := []File{{Path: "other/Not Plain", Data: []byte("a name outside the memory format")}}
	for i := range 1000 {
		files = append(files, File{Path: fmt.Sprintf("entries/aa/%032x.json", i), Data: []byte(strconv.Itoa(i))})
	}
	c, _, err := r.Append(ctx, "refs/synaptic/memory", files, sig, "many")
	if err != nil {
		t.Fatal(err)
	}
	sub := testrepo.Git(t, dir, "rev-parse", c.String()+":entries/aa")
	raw, err := os.ReadFile(filepath.Join(dir, ".git", "objects", sub[:2], sub[2:]))
	if err != nil {
		t.Fatalf("the large tree is not loose: %v", err)
	}
	if len(raw) < 1000*65 { // 65 bytes an entry, stored
		t.Errorf("the large tree was written compressed (%d bytes)", len(raw))
	}
	if n := len(strings.Split(testrepo.Git(t, dir, "ls-tree", sub), "\n")); n != 1000 {
		t.Errorf("git lists %d entries in the large tree, want 1000", n)
	}
	testrepo.Git(t, dir, "fsck", "--strict", "--no-progress")
	fresh := open(t, dir)
	if n, err := fresh.CountFiles(c, "entries"); err != nil || n != 1000 {
		t.Errorf("read back %d files (%v), want 1000", n, err)
	}
	if got := testrepo.Git(t, dir, "cat-file", "-p", c.String()+":entries/aa/"+fmt.Sprintf("%032x.json", 999)); got != "999" {
		t.Errorf("git reads %q from the large tree's last file", got)
	}
}

// objectHash, which checks what git cat-file sends, gives go-git's ids.
func TestObjectHashIsGitsID(t *testing.T) {
	for _, typ := range []plumbing.ObjectType{plumbing.BlobObject, plumbing.TreeObject, plumbing.CommitObject, plumbing.TagObject} {
		for _, data := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("memory "), 10000)} {
			if got, want := objectHash(typ, data), plumbing.ComputeHash(typ, data); got != want {
				t.Errorf("%s of %d bytes: %s, want %s", typ, len(data), got, want)
			}
		}
	}
}

// ReadAhead leaves the trees on the way to a file's directory read, so
// that the Append of that file reads none of them again; it reads nothing
// where there is no such directory, no tip, or no private repository.
func TestReadAheadReadsTheWayToADirectory(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	const ref = "refs/synaptic/memory"
	c, _, err := open(t, dir).Append(ctx, ref, []File{{"entries/aa/a.json", []byte("a")}, {"entries/bb/b.json", []byte("b")}}, sig, "one")
	if err != nil {
		t.Fatal(err)
	}
	testrepo.Git(t, dir, "gc", "--quiet") // packed, as a large memory is
	cached := func(r *Repo, path string) bool {
		_, ok := r.trees.get(plumbing.NewHash(testrepo.Git(t, dir, "rev-parse", c.String()+":"+path)))
		return ok
	}
	r := open(t, dir)
	r.ReadAhead(ref, "entries/zz/z.json") // no such directory
	r.ReadAhead("refs/synaptic/none", "entries/aa/x.json")
	r.ReadAhead(PrivatePrefix+"memory", "entries/aa/x.json")
	if cached(r, "entries/aa") || cached(r, "entries/bb") {
		t.Fatal("a directory was read that no read ahead led to")
	}
	r.ReadAhead(ref, "entries/aa/x.json")
	for _, p := range []string{"", "entries", "entries/aa"} {
		if !cached(r, p) {
			t.Errorf("tree %q is not read ahead", p)
		}
	}
	if cached(r, "entries/bb") {
		t.Error("entries/bb was read: only the way to entries/aa is")
	}
	if _, _, err := r.Append(ctx, ref, []File{{"entries/aa/x.json", []byte("x")}}, sig, "two"); err != nil {
		t.Fatal(err)
	}
	if got := testrepo.Git(t, dir, "show", ref+":entries/aa/x.json"); got != "x" {
		t.Errorf("entries/aa/x.json holds %q after the append", got)
	}
}

// pairEntries pairs the entries of two trees by name and kind alike
// whether it walks them side by side (trees in git's order) or matches
// them by a map (a tree out of order, which git's fsck calls malformed):
// every entry once, with its counterpart or none.
func TestPairEntriesWalksAndMatchesAlike(t *testing.T) {
	h := func(s string) Hash { return plumbing.ComputeHash(plumbing.BlobObject, []byte(s)) }
	file := func(name, data string) object.TreeEntry {
		return object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h(data)}
	}
	dir := func(name, data string) object.TreeEntry {
		return object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h(data)}
	}
	// "a.b" sorts before "a/" but after "a": git's order (treeKey)
	old := []object.TreeEntry{file("a", "1"), file("a.b", "2"), dir("c", "3"), file("d", "4"), file("x", "5")}
	new := []object.TreeEntry{file("a.b", "2"), dir("a", "6"), file("c", "7"), dir("d", "8"), file("e", "9"), {Name: "x", Mode: filemode.Executable, Hash: h("5")}}
	want := []string{"a/-", "-/a/", "a.b/a.b", "c//-", "-/c", "d/-", "-/d/", "-/e", "x/x"}
	sortedOK := func(es []object.TreeEntry) {
		t.Helper()
		if !inTreeOrder(es) {
			t.Fatalf("%v is not in tree order", es)
		}
	}
	sortedOK(old)
	sortedOK(new)
	pairs := func(a, b []object.TreeEntry) []string {
		var out []string
		err := pairEntries(a, b, func(o, n *object.TreeEntry) error {
			k := func(e *object.TreeEntry) string {
				if e == nil {
					return "-"
				}
				return treeKey(*e)
			}
			if o != nil && n != nil && treeKey(*o) != treeKey(*n) {
				t.Errorf("%s paired with %s", treeKey(*o), treeKey(*n))
			}
			out = append(out, k(o)+"/"+k(n))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(out)
		return out
	}
	sort.Strings(want)
	if got := pairs(old, new); !slices.Equal(got, want) {
		t.Errorf("walked side by side:\n%v\nwant\n%v", got, want)
	}
	rev := func(es []object.TreeEntry) []object.TreeEntry {
		r := slices.Clone(es)
		slices.Reverse(r)
		return r
	}
	if inTreeOrder(rev(new)) {
		t.Fatal("a reversed tree reads as in tree order")
	}
	for _, c := range [][2][]object.TreeEntry{{rev(old), new}, {old, rev(new)}, {rev(old), rev(new)}} {
		if got := pairs(c[0], c[1]); !slices.Equal(got, want) {
			t.Errorf("matched by a map:\n%v\nwant\n%v", got, want)
		}
	}
	if !inTreeOrder(nil) || inTreeOrder([]object.TreeEntry{file("a", "1"), file("a", "2")}) {
		t.Error("inTreeOrder: no entries are in order; a name twice is not")
	}
}

// ReadTrees reads a ref's trees a piece at a time, the root's first, until
// the tree cache keeps them all; an Append then changes a directory it
// kept, and the trees it wrote are kept in place of those they replace. A missing ref or private
// repository reads nothing; a cache three quarters full stops it.
func TestReadTreesKeepsARefsTrees(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	const ref = "refs/synaptic/memory"
	c, _, err := open(t, dir).Append(ctx, ref, []File{{"entries/aa/a.json", []byte("a")}, {"entries/bb/b.json", []byte("b")}, {"ops/cc/c.json", []byte("c")}}, sig, "one")
	if err != nil {
		t.Fatal(err)
	}
	testrepo.Git(t, dir, "gc", "--quiet") // packed, as a large memory is
	trees := []string{"", "entries", "ops", "entries/aa", "entries/bb", "ops/cc"}
	hash := func(path string) Hash {
		return plumbing.NewHash(testrepo.Git(t, dir, "rev-parse", c.String()+":"+path))
	}
	kept := func(r *Repo) (n int) {
		for _, p := range trees {
			if r.trees.has(hash(p)) {
				n++
			}
		}
		return n
	}
	r := open(t, dir)
	if r.ReadTrees("refs/synaptic/none", 10) || r.ReadTrees(PrivatePrefix+"memory", 10) || kept(r) != 0 {
		t.Fatal("trees read for a ref that is not there")
	}
	for i, want := range []int{2, 4, 6} {
		more := r.ReadTrees(ref, 2)
		if got := kept(r); got != want || more != (i < 2) {
			t.Fatalf("after %d pieces of 2: %d trees kept (want %d), more %v", i+1, got, want, more)
		}
	}
	if !r.trees.has(hash("entries/aa")) || r.ReadTrees(ref, 0) {
		t.Fatal("a tree kept is read again")
	}
	for _, p := range trees { // parsed from what was kept, as git reads them
		entries, ok := r.trees.get(hash(p))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name)
		}
		if want := testrepo.Git(t, dir, "ls-tree", "--name-only", c.String()+":"+p); !ok || strings.Join(names, "\n") != want {
			t.Errorf("tree %q parsed from the cache: %q, want %q", p, names, want)
		}
	}
	r.trees.byHash, r.trees.order = nil, nil // as a save finds them: kept, not parsed
	c2, _, err := r.Append(ctx, ref, []File{{"entries/aa/x.json", []byte("x")}}, sig, "two")
	if err != nil {
		t.Fatal(err)
	}
	if got := testrepo.Git(t, dir, "show", ref+":entries/aa/x.json"); got != "x" {
		t.Errorf("entries/aa/x.json holds %q after the append", got)
	}
	if !r.trees.has(plumbing.NewHash(testrepo.Git(t, dir, "rev-parse", c2.String()+":entries/aa"))) {
		t.Error("the directory the append wrote is not kept")
	}
	// the versions it replaced go; the directories it did not touch stay
	for p, want := range map[string]bool{"": false, "entries": false, "entries/aa": false, "entries/bb": true, "ops/cc": true} {
		if got := r.trees.has(hash(p)); got != want {
			t.Errorf("tree %q of the first commit kept: %v, want %v", p, got, want)
		}
	}

	full := open(t, dir)
	full.trees.limit = 4000
	for i := range 3 { // three quarters full
		full.trees.keep(plumbing.ComputeHash(plumbing.TreeObject, []byte{byte(i)}), make([]byte, 1000), false)
	}
	if full.ReadTrees(ref, 100) || kept(full) != 0 {
		t.Errorf("trees read into a cache three quarters full: %d", kept(full))
	}
}

// has reports whether the content of h is kept.
func (c *treeCache) has(h Hash) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.raw[h]
	return ok
}

// The trees kept as stored are bounded in bytes: the least recently used
// goes first, and a tree asked for counts as used.
func TestTreeCacheKeepsTheRecentlyUsed(t *testing.T) {
	var c treeCache
	c.limit = 4 * 100
	h := func(s string) Hash { return plumbing.ComputeHash(plumbing.TreeObject, []byte(s)) }
	tree := func(name string) []byte { // a tree of one file, 100 bytes
		data, err := encodeTree([]object.TreeEntry{{Name: name + strings.Repeat("x", 100-len("100644 ")-1-20-len(name)), Mode: filemode.Regular, Hash: h(name)}})
		if err != nil || len(data) != 100 {
			t.Fatalf("%d bytes %v", len(data), err)
		}
		return data
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		c.keep(h(n), tree(n), false)
	}
	if _, ok := c.get(h("a")); !ok { // parsed again from what is kept
		t.Fatal("a is not kept")
	}
	c.keep(h("e"), tree("e"), false) // b goes: a was used since
	for n, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true, "e": true} {
		if ok := c.has(h(n)); ok != want {
			t.Errorf("%s kept: %v", n, ok)
		}
	}
	if c.rawSize != 400 {
		t.Errorf("%d bytes kept, want 400", c.rawSize)
	}
	c.keep(h("big"), make([]byte, 101), false) // over a quarter of the bound: not kept
	if c.has(h("big")) {
		t.Error("a tree over a quarter of the bound is kept")
	}
	c.release()
	if c.rawSize != 0 || len(c.raw) != 0 || len(c.rawOrder) != 0 || c.has(h("a")) {
		t.Errorf("after release: %d bytes, %d trees kept", c.rawSize, len(c.raw))
	}
	if _, ok := c.get(h("c")); ok { // nor parsed from what was let go
		t.Error("a tree let go is still read")
	}
}

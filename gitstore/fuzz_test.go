package gitstore

import (
	"bytes"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// FuzzParseLog feeds arbitrary bytes to the git log parser: it must never
// panic, whatever paths or messages a history holds.
func FuzzParseLog(f *testing.F) {
	f.Add([]byte("\x1eabc\x1f\x1fA <a@b>\x1f1700000000\x1fmsg\x1f\x00\n:100644 100644 aa bb M\x00path\x00:000000 100644 00 cc A\x00new\x00"))
	f.Add([]byte("\x1e\x1f\x1f\x1f\x1f\x1f\x00\n:100644 100644 aa aa R100\x00old\x00new\x00"))
	f.Add([]byte("\x1e\x1f\x1f\x1f\x1f\x1f\x00\n:100644 000000 aa 00 D\x00old\x00:000000 100644 00 aa A\x00new\x00"))
	f.Add([]byte("\x1e\x1e\x1f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parseLog(bytes.NewReader(data), func(_ Commit, changes []rawChange) error {
			fileChanges(pairExactRenames(changes))
			return nil
		})
	})
}

// FuzzDecodeTree checks the tree parser a save reads its directories
// with against go-git's object.Tree: the same entries and modes, and an
// error for what go-git refuses; and treeDirs against it.
func FuzzDecodeTree(f *testing.F) {
	id := bytes.Repeat([]byte{0xab}, 20)
	entry := func(mode, name string) []byte {
		return append([]byte(mode+" "+name+"\x00"), id...)
	}
	f.Add([]byte{})
	f.Add(bytes.Join([][]byte{entry("40000", "entries"), entry("100644", "a.json"), entry("100755", "run"),
		entry("120000", "link"), entry("160000", "sub"), entry("100664", "old-mode"), entry("644", "odd")}, nil))
	f.Add(entry("100644", ""))     // an empty name
	f.Add([]byte("100644 a.json")) // no NUL
	f.Add([]byte("100644"))        // no space
	f.Add([]byte("10x644 a\x00" + string(id)))
	f.Add(entry("100644", "a")[:15]) // a truncated id
	f.Fuzz(func(t *testing.T, data []byte) {
		obj := &plumbing.MemoryObject{}
		obj.SetType(plumbing.TreeObject)
		obj.Write(data)
		got, err := decodeTreeData(data)
		var want object.Tree
		wantErr := want.Decode(obj)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: error %v, go-git's %v", data, err, wantErr)
		}
		dirs, dirsErr := treeDirs(data) // what reading ahead walks, alike
		if (dirsErr != nil) != (err != nil) {
			t.Fatalf("%q: treeDirs error %v, decodeTree's %v", data, dirsErr, err)
		}
		if err != nil {
			return
		}
		var wantDirs []Hash
		for _, e := range got {
			if e.Mode == filemode.Dir {
				wantDirs = append(wantDirs, e.Hash)
			}
		}
		if !slices.Equal(dirs, wantDirs) {
			t.Fatalf("%q: treeDirs %v, want %v", data, dirs, wantDirs)
		}
		if len(got) != len(want.Entries) {
			t.Fatalf("%q: %d entries, go-git %d", data, len(got), len(want.Entries))
		}
		for i := range got {
			if got[i] != want.Entries[i] {
				t.Fatalf("%q: entry %d is %+v, go-git's %+v", data, i, got[i], want.Entries[i])
			}
		}
	})
}

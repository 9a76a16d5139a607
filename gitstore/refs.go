package gitstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Refs are read here from git's own files (loose ref files, then
// packed-refs) rather than through go-git, whose reference walk takes any
// file under refs/ for a ref: a "REF.lock" that git or another
// git-synaptic holds for a moment made every listing fail ("ref file is
// empty"). Lock files and names git would refuse are skipped.

// Tip returns the commit a ref points at, or ZeroHash when it does not exist.
func (r *Repo) Tip(ref string) (Hash, error) {
	if r.priv != nil && isPrivateRef(ref) {
		p, err := r.privateRepo(false)
		if err != nil || p == nil {
			return ZeroHash, err
		}
		return p.Tip(ref)
	}
	h, ok, err := r.readLoose(ref)
	if err != nil || ok {
		return h, err
	}
	packed, err := r.packedRefs()
	if err != nil {
		return ZeroHash, err
	}
	return packed[ref], nil
}

// readLoose reads the loose file of ref; ok is false when there is none.
func (r *Repo) readLoose(ref string) (h Hash, ok bool, err error) {
	if !validRefName(ref) {
		return ZeroHash, false, fmt.Errorf("read %s: not a ref name", ref)
	}
	b, err := os.ReadFile(filepath.Join(r.commonDir, filepath.FromSlash(ref)))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EISDIR) {
		return ZeroHash, false, nil
	}
	if err != nil {
		return ZeroHash, false, fmt.Errorf("read %s: %w", ref, err)
	}
	s := strings.TrimSpace(string(b))
	if strings.HasPrefix(s, "ref:") {
		return ZeroHash, false, fmt.Errorf("%s is a symbolic ref", ref)
	}
	h, err = plumbingHash(s)
	if err != nil {
		return ZeroHash, false, fmt.Errorf("read %s: broken ref file (%q)", ref, short(s))
	}
	return h, true, nil
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// packedRefs reads packed-refs (absent: none).
func (r *Repo) packedRefs() (map[string]Hash, error) {
	f, err := os.Open(filepath.Join(r.commonDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Hash{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read packed-refs: %w", err)
	}
	defer f.Close()
	out := map[string]Hash{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		hs, name, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			continue
		}
		if h, err := plumbingHash(string(hs)); err == nil {
			out[string(name)] = h
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read packed-refs: %w", err)
	}
	return out, nil
}

// Refs lists the refs under any of the prefixes with their targets. A
// prefix ending in "/" names a directory of refs (e.g. "refs/synaptic/");
// any other names one ref. Loose refs win over packed ones, as in git;
// lock files, symbolic refs and unreadable ref files are skipped. Private
// refs come from the private repository.
func (r *Repo) Refs(prefixes ...string) (map[string]Hash, error) {
	out, err := r.ownRefs(prefixes...)
	if err != nil {
		return nil, err
	}
	priv, err := r.privateRefs(prefixes)
	if err != nil {
		return nil, err
	}
	for name, h := range priv {
		out[name] = h
	}
	return out, nil
}

// ownRefs is Refs in this repository's own files.
func (r *Repo) ownRefs(prefixes ...string) (map[string]Hash, error) {
	out := map[string]Hash{}
	for _, p := range prefixes {
		if !strings.HasSuffix(p, "/") {
			if h, ok, err := r.readLoose(p); err == nil && ok {
				out[p] = h
			}
			continue
		}
		err := r.walkRefs(p, func(name string) {
			if h, ok, err := r.readLoose(name); err == nil && ok {
				out[name] = h
			}
		})
		if err != nil {
			return nil, fmt.Errorf("list refs: %w", err)
		}
	}
	// Read after the loose files: git packs refs by writing packed-refs
	// first and deleting loose files after, so a ref is never missed.
	packed, err := r.packedRefs()
	if err != nil {
		return nil, fmt.Errorf("list refs: %w", err)
	}
	for name, h := range packed {
		if _, loose := out[name]; !loose && matchesAny(name, prefixes) {
			out[name] = h
		}
	}
	return out, nil
}

func matchesAny(name string, prefixes []string) bool {
	for _, p := range prefixes {
		if name == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(name, p)) {
			return true
		}
	}
	return false
}

// walkRefs calls f with the name of every loose ref file under the
// directory prefix (lock files and invalid names left out).
func (r *Repo) walkRefs(prefix string, f func(name string)) error {
	root := filepath.Join(r.commonDir, filepath.FromSlash(strings.TrimSuffix(prefix, "/")))
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // gone meanwhile (git prunes empty ref directories)
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(r.commonDir, path)
		if err != nil {
			return nil
		}
		if name := filepath.ToSlash(rel); validRefName(name) {
			f(name)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// validRefName applies the parts of git check-ref-format that matter for
// reading: no lock files, no "..", no component starting with ".".
func validRefName(name string) bool {
	if !strings.HasPrefix(name, "refs/") || strings.HasSuffix(name, ".lock") || strings.Contains(name, "..") || strings.HasSuffix(name, "/") {
		return false
	}
	for _, c := range strings.Split(name, "/") {
		if c == "" || c[0] == '.' || strings.HasSuffix(c, ".lock") {
			return false
		}
	}
	return !strings.ContainsAny(name, " ~^:?*[\\\x7f") && !strings.Contains(name, "@{")
}

// Lock is a ref lock file.
type Lock struct {
	Path string        `json:"path"`
	Age  time.Duration `json:"age_ns"`
}

// staleLockAge is how old a ref lock file must be before it is taken for the
// leftover of a killed process. git holds ref locks for microseconds, so
// this is generous.
const staleLockAge = 10 * time.Second

// StaleLocks lists the lock files of the refs under the prefixes (as in
// Refs) that are older than a live process would hold them.
func (r *Repo) StaleLocks(prefixes ...string) []Lock {
	var out []Lock
	if r.priv != nil {
		if p, _ := r.privateRepo(false); p != nil {
			var mine []string
			for _, x := range prefixes {
				if isPrivateRef(x) {
					mine = append(mine, x)
				}
			}
			if len(mine) > 0 {
				out = p.StaleLocks(mine...)
			}
		}
	}
	check := func(path string) {
		if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
			if age := time.Since(fi.ModTime()); age > staleLockAge {
				out = append(out, Lock{Path: path, Age: age})
			}
		}
	}
	for _, p := range prefixes {
		if !strings.HasSuffix(p, "/") {
			check(filepath.Join(r.commonDir, filepath.FromSlash(p)) + ".lock")
			continue
		}
		root := filepath.Join(r.commonDir, filepath.FromSlash(strings.TrimSuffix(p, "/")))
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".lock") {
				check(path)
			}
			return nil
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// RemoveStaleLocks deletes the stale lock files under the prefixes and
// returns the ones it removed.
func (r *Repo) RemoveStaleLocks(prefixes ...string) []Lock {
	var out []Lock
	for _, l := range r.StaleLocks(prefixes...) {
		if os.Remove(l.Path) == nil {
			out = append(out, l)
		}
	}
	return out
}

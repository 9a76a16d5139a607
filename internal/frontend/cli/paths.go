package cli

import (
	"os"
	"path/filepath"
	"strings"
)

// repoPaths turns file arguments as the user typed them into paths from the
// repository's top, the way git reads pathspecs: relative to the current
// directory dir, absolute, or ":/path" from the top. From a subdirectory, a
// path that names nothing there but names a file from the top is taken from
// the top, so "cochanges strlcpy.c" and "cochanges compat/strlcpy.c" both
// work in compat/. A path outside the repository is a usage error.
func repoPaths(root, dir string, paths []string) ([]string, error) {
	top, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	top = realPath(top)
	here, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	here = realPath(here)
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		rel, err := repoPath(top, here, p)
		if err != nil {
			return nil, err
		}
		out = append(out, rel)
	}
	return out, nil
}

func repoPath(top, here, p string) (string, error) {
	if rest, ok := strings.CutPrefix(p, ":/"); ok {
		return filepath.ToSlash(filepath.Clean("/" + rest))[1:], nil
	}
	abs := p
	if !filepath.IsAbs(p) {
		abs = filepath.Join(here, p)
		if _, err := os.Lstat(abs); err != nil && here != top {
			if _, err := os.Lstat(filepath.Join(top, p)); err == nil {
				abs = filepath.Join(top, p)
			}
		}
	} else {
		abs = filepath.Join(realPath(filepath.Dir(p)), filepath.Base(p))
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", usagef("%s: outside the repository at %s", p, top)
	}
	return filepath.ToSlash(rel), nil
}

// path is a file path the user gave, read as git -C reads it: relative
// to the -C directory ("-" and absolute paths as they are).
func (e *env) path(p string) string {
	if p == "-" || p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.dir, p)
}

// localURL reads a repository URL as git -C reads a remote's: a path that
// exists relative to the -C directory is that path; anything else (a URL,
// host:path) is left as given.
func (e *env) localURL(u string) string {
	if p := e.path(u); p != u {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return u
}

// realPath resolves symbolic links in p as far as p exists, so that a
// repository reached through a link (/tmp on macOS) compares equal.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

package memory

import (
	"path"
	"strings"
	"unicode/utf8"
)

// MaxFiles is the most files an entry or operation records (Files).
const MaxFiles = 32

// ValidObjectID reports whether s is a git object id: 40 (SHA-1) or 64
// (SHA-256) lowercase hex digits.
func ValidObjectID(s string) bool { return (len(s) == 40 || len(s) == 64) && lowerHex(s) }

// ValidPath reports whether p can name a file of a repository's tree: a
// relative, clean, slash-separated path of valid UTF-8, at most 1,024
// bytes, without control characters.
func ValidPath(p string) bool {
	if p == "" || len(p) > 1024 || !utf8.ValidString(p) || path.Clean(p) != p || strings.HasPrefix(p, "/") || p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return false
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// ValidateCode checks an anchor and the files recorded at it: an object
// id, at most MaxFiles valid paths, each with a blob id, and no files
// without an anchor.
func ValidateCode(anchor string, files map[string]string) error {
	if anchor != "" && !ValidObjectID(anchor) {
		return Invalidf("anchor %q is not a commit id", anchor)
	}
	if len(files) > 0 && anchor == "" {
		return Invalidf("files recorded without an anchor")
	}
	if len(files) > MaxFiles {
		return Invalidf("%d files recorded (at most %d)", len(files), MaxFiles)
	}
	for p, blob := range files {
		if !ValidPath(p) {
			return Invalidf("recorded file %q is not a relative path in a tree", p)
		}
		if !ValidObjectID(blob) {
			return Invalidf("recorded file %q has an invalid blob id %q", p, blob)
		}
	}
	return nil
}

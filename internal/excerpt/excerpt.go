// Package excerpt cuts text for display: a first line, a first sentence
// or two, a clip at a word boundary, never in the middle of a rune; and
// counts things in words.
package excerpt

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// Plural is "1 commit" or "n commits" ("1 entry", "n entries").
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if stem, ok := strings.CutSuffix(noun, "y"); ok {
		return fmt.Sprintf("%d %sies", n, stem)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// FirstLine is the first non-blank line of s, cut to n characters.
func FirstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// sentenceEnd ends a sentence: . ! or ? before a space or the end.
var sentenceEnd = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[.!?](\s|$)`) })

// Digest is the first sentence of text, with the second when the first
// is short, on one line: at most about 200 characters, except that a
// first sentence is never cut in the middle below 400 (it is the point of
// the entry); text with no sentence end that short is cut at a word.
func Digest(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	const most, longest = 200, 400
	end := 0
	for _, m := range sentenceEnd().FindAllStringIndex(text, 2) {
		if end > 0 && m[0]+1 > most || end == 0 && m[0]+1 > longest || end >= 80 {
			break
		}
		end = m[0] + 1
	}
	if end == 0 {
		if len(text) <= most {
			return text
		}
		return text[:WordCut(text, most)] + "…"
	}
	if end < len(text) {
		return text[:end] + " …"
	}
	return text
}

// WordCut is where to cut text, longer than n bytes, to at most n bytes:
// at its last space, tab or newline if that leaves at least half, else at
// the start of the rune byte n falls in.
func WordCut(text string, n int) int {
	if cut := strings.LastIndexAny(text[:n], " \n\t"); cut >= n/2 {
		return cut
	}
	return RuneCut(text, n)
}

// RuneCut moves byte index i of s back to the start of its rune, so that
// s[:i] is whole UTF-8.
func RuneCut(s string, i int) int {
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// Clip cuts text to at most n bytes at a word boundary, marking the cut.
func Clip(text string, n int) string {
	if len(text) <= n {
		return text
	}
	return strings.TrimSpace(text[:WordCut(text, n-len("…"))]) + "…"
}

package excerpt

import (
	"strings"
	"testing"
)

func TestDigestIsWholeSentences(t *testing.T) {
	for in, want := range map[string]string{
		"We chose Postgres. It has transactions. And JSON.":                                                                        "We chose Postgres. It has transactions. …",
		"We chose Postgres for billing because we need transactions across the ledger and the invoices tables. Redis was dropped.": "We chose Postgres for billing because we need transactions across the ledger and the invoices tables. …",
		"no sentence end here":      "no sentence end here",
		"one line\nsplit   across":  "one line split across",
		strings.Repeat("word ", 60): strings.TrimSpace(strings.Repeat("word ", 40)) + "…",
		strings.Repeat("€", 100):    strings.Repeat("€", 66) + "…", // cut at a rune start
		// a long first sentence stays whole; a second one is left out
		strings.Repeat("long ", 50) + "end. Next.": strings.Repeat("long ", 50) + "end. …",
		// past 400 characters it is cut at a word
		strings.Repeat("long ", 90) + "end.": strings.TrimSpace(strings.Repeat("long ", 40)) + "…",
	} {
		if got := Digest(in); got != want {
			t.Errorf("Digest(%.40q) = %q, want %q", in, got, want)
		}
	}
}

func TestClipAndFirstLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"short", "short"},
		{"a clip at a word boundary here", "a clip at a…"},
		{strings.Repeat("é", 10), "éééééé…"}, // 20 bytes to at most 16: never half a rune
	} {
		if got := Clip(c.in, 16); got != c.want {
			t.Errorf("Clip(%q, 16) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := FirstLine("\n  first line  \nsecond", 80); got != "first line" {
		t.Errorf("FirstLine = %q", got)
	}
	if got := FirstLine("ünïcödé line", 5); got != "ünïc…" {
		t.Errorf("FirstLine cut = %q", got)
	}
}

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n          int
		noun, want string
	}{{1, "entry", "1 entry"}, {2, "entry", "2 entries"}, {0, "commit", "0 commits"}, {1, "commit", "1 commit"}} {
		if got := Plural(c.n, c.noun); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}

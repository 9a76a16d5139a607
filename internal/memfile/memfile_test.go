package memfile

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMarkdownRoundTripsAndReadsWhatPeopleWrite(t *testing.T) {
	created := time.Date(2026, 11, 25, 13, 10, 21, 0, time.UTC)
	updated := created.Add(90*time.Minute + 123456789)
	d := Doc{ID: "5d2f7cea1d7f3b40613c6e435db45209", Type: "decision", Tier: "longterm", Tags: []string{"db", "billing"}, Pinned: true,
		Private: true, Created: &created, Updated: &updated, Author: "Ada <ada@example.com>", Session: "s-1", Agent: "main",
		Content: "we chose postgres: we need transactions\n\n---\n\nkey: value lines in the body stay content"}
	got, err := ParseMarkdown(Markdown(d))
	if err != nil || !reflect.DeepEqual(got, d) {
		t.Fatalf("round trip:\n%+v\n%v\nwant %+v\n%s", got, err, d, Markdown(d))
	}
	if name := FileName(d); name != "decision/2026-11-25-we-chose-postgres-we-need-transactions-5d2f7cea.md" {
		t.Errorf("file name %q", name)
	}

	for _, c := range []struct {
		name, text string
		want       Doc
	}{
		{"no front matter", "just a thought\r\nover two lines\r\n", Doc{Content: "just a thought\nover two lines"}},
		{"YAML as people write it", "---\ntype: issue\ntags: [ci, flaky]\n# a comment\nauthor: 'Bo'\n---\n\nTestSync times out\n", Doc{Type: "issue", Tags: []string{"ci", "flaky"}, Author: "Bo", Content: "TestSync times out"}},
		{"a list without brackets", "---\ntags: ci, \"flaky\"\n---\nx", Doc{Tags: []string{"ci", "flaky"}, Content: "x"}},
		{"an empty front matter", "---\n---\nbody", Doc{Content: "body"}},
		{"a byte order mark", "\ufeff---\ntype: rule\n---\nuse pnpm", Doc{Type: "rule", Content: "use pnpm"}},
		{"an unclosed fence is content", "---\nnot a header", Doc{Content: "---\nnot a header"}},
	} {
		got, err := ParseMarkdown([]byte(c.text))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v %v, want %+v", c.name, got, err, c.want)
		}
	}
	for _, bad := range []string{"---\njust words\n---\nx", "---\npinned: maybe\n---\nx", "---\ncreated: yesterday\n---\nx"} {
		if _, err := ParseMarkdown([]byte(bad)); !errors.Is(err, ErrFormat) {
			t.Errorf("%q: %v, want ErrFormat", bad, err)
		}
	}
	if name := FileName(Doc{Content: "Ünïcode — only?! and punctuation"}); !strings.HasPrefix(name, "insight/undated-n-code-only-and-punctuation") {
		t.Errorf("file name of an undated insight: %q", name)
	}
}

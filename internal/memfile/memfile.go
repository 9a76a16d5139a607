// Package memfile writes memory entries as files a person can read and
// edit, Markdown with a front matter or JSON lines, and reads them back.
//
// A Markdown file is
//
//	---
//	id: 5d2f7cea1d7f3b40613c6e435db45209
//	type: decision
//	tags: ["db", "billing"]
//	created: 2026-11-25T13:10:21Z
//	---
//	we chose postgres for billing: we need transactions
//
// The front matter holds one "key: value" per line; every value is JSON
// (strings may go unquoted), so the header is also valid YAML for the
// tools that read Markdown front matter. Everything after the closing
// line is the content. A file without front matter is content alone.
package memfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Doc is one entry as exported: what import reads back (content, type,
// tier, tags, pinned, private, created, session and agent; id and updated
// to find the entry again and see whether it changed since) and what a
// reader wants to see besides (author, archived).
type Doc struct {
	ID       string     `json:"id,omitempty"`
	Type     string     `json:"type,omitempty"`
	Tier     string     `json:"tier,omitempty"`
	Tags     []string   `json:"tags,omitempty"`
	Pinned   bool       `json:"pinned,omitempty"`
	Private  bool       `json:"private,omitempty"`
	Archived bool       `json:"archived,omitempty"`
	Created  *time.Time `json:"created,omitempty"`
	// Updated is when the entry last changed before the export: an
	// import refuses to overwrite changes made after it.
	Updated *time.Time `json:"updated,omitempty"`
	Author  string     `json:"author,omitempty"`
	Session string     `json:"session_id,omitempty"`
	Agent   string     `json:"agent_id,omitempty"`
	Content string     `json:"content"`
}

// ErrFormat marks a file that is not an entry.
var ErrFormat = errors.New("not a memory file")

const fence = "---"

// Markdown is d as a Markdown file with a front matter.
func Markdown(d Doc) []byte {
	var b bytes.Buffer
	b.WriteString(fence + "\n")
	field := func(key string, v any) {
		var j bytes.Buffer
		enc := json.NewEncoder(&j)
		enc.SetEscapeHTML(false) // "Ada <ada@example.com>", not \u003c
		enc.Encode(v)
		fmt.Fprintf(&b, "%s: %s", key, j.Bytes())
	}
	if d.ID != "" {
		fmt.Fprintf(&b, "id: %s\n", d.ID)
	}
	if d.Type != "" {
		fmt.Fprintf(&b, "type: %s\n", d.Type)
	}
	if d.Tier != "" {
		fmt.Fprintf(&b, "tier: %s\n", d.Tier)
	}
	if len(d.Tags) > 0 {
		field("tags", d.Tags)
	}
	for _, f := range []struct {
		key string
		on  bool
	}{{"pinned", d.Pinned}, {"private", d.Private}, {"archived", d.Archived}} {
		if f.on {
			fmt.Fprintf(&b, "%s: true\n", f.key)
		}
	}
	if d.Created != nil {
		fmt.Fprintf(&b, "created: %s\n", d.Created.UTC().Format(time.RFC3339))
	}
	if d.Updated != nil { // to the nanosecond: an edit a moment after the export is newer
		fmt.Fprintf(&b, "updated: %s\n", d.Updated.UTC().Format(time.RFC3339Nano))
	}
	for _, f := range []struct{ key, v string }{{"author", d.Author}, {"session_id", d.Session}, {"agent_id", d.Agent}} {
		if f.v != "" {
			field(f.key, f.v)
		}
	}
	b.WriteString(fence + "\n")
	b.WriteString(strings.TrimRight(d.Content, "\n") + "\n")
	return b.Bytes()
}

// ParseMarkdown reads a Markdown file written by Markdown, perhaps edited
// since, or one a person wrote: without front matter, the whole text is
// the content.
func ParseMarkdown(data []byte) (Doc, error) {
	text := strings.TrimPrefix(strings.ReplaceAll(string(data), "\r\n", "\n"), "\ufeff")
	head, body, ok := frontMatter(text)
	if !ok {
		return Doc{Content: strings.TrimSpace(text)}, nil
	}
	fields := map[string]json.RawMessage{}
	for i, line := range strings.Split(head, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		key, val, found := strings.Cut(line, ":")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !found || key == "" {
			return Doc{}, fmt.Errorf("%w: front matter line %d is not 'key: value': %q", ErrFormat, i+2, line)
		}
		fields[key] = jsonValue(key, val)
	}
	raw, _ := json.Marshal(fields)
	var d Doc
	if err := json.Unmarshal(raw, &d); err != nil {
		return Doc{}, fmt.Errorf("%w: front matter: %v", ErrFormat, err)
	}
	d.Content = strings.TrimSpace(body)
	return d, nil
}

// frontMatter splits text into its front matter and the rest.
func frontMatter(text string) (head, body string, ok bool) {
	if !strings.HasPrefix(text, fence+"\n") {
		return "", "", false
	}
	rest := text[len(fence)+1:]
	if strings.HasPrefix(rest, fence+"\n") {
		return "", rest[len(fence)+1:], true
	}
	i := strings.Index(rest, "\n"+fence+"\n")
	if i < 0 {
		if strings.HasSuffix(rest, "\n"+fence) {
			return rest[:len(rest)-len(fence)-1], "", true
		}
		return "", "", false
	}
	return rest[:i], rest[i+len(fence)+2:], true
}

// jsonValue is a front matter value as JSON: as written when it is JSON,
// else an unquoted string as YAML allows, and for tags a YAML list
// without quotes ("[db, billing]" or "db, billing").
func jsonValue(key, val string) json.RawMessage {
	if json.Valid([]byte(val)) {
		return json.RawMessage(val)
	}
	if key == "tags" {
		var tags []string
		for _, t := range strings.Split(strings.Trim(val, "[]"), ",") {
			if t = strings.Trim(strings.TrimSpace(t), `"'`); t != "" {
				tags = append(tags, t)
			}
		}
		b, _ := json.Marshal(tags)
		return b
	}
	b, _ := json.Marshal(strings.Trim(val, `"'`))
	return b
}

// FileName is where an export puts d: a folder per type, then the day it
// was written, the first words of its content and the start of its id,
// e.g. decision/2026-11-25-we-chose-postgres-for-5d2f7cea.md.
func FileName(d Doc) string {
	day := "undated"
	if d.Created != nil {
		day = d.Created.UTC().Format(time.DateOnly)
	}
	name := day
	if s := slug(d.Content, 40); s != "" {
		name += "-" + s
	}
	if len(d.ID) >= 8 {
		name += "-" + d.ID[:8]
	}
	typ := d.Type
	if typ == "" {
		typ = "insight"
	}
	return typ + "/" + name + ".md"
}

// slug is the first words of s in lower-case ASCII letters and digits,
// joined by hyphens, as many whole words as fit in max bytes.
func slug(s string, max int) string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return r >= unicode.MaxASCII || !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := ""
	for _, w := range words {
		next := w
		if out != "" {
			next = out + "-" + w
		}
		if len(next) > max {
			if out == "" {
				return w[:max]
			}
			break
		}
		out = next
	}
	return out
}

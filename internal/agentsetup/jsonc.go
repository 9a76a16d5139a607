package agentsetup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// This file edits JSON and JSONC (JSON with comments and trailing commas,
// as VS Code, Gemini CLI and OpenCode read their settings) in place: a
// member or an array element is added or removed by splicing the text, so
// everything else in the file (the user's other settings, their order,
// indentation and comments) stays byte for byte as it was.

// node is one parsed JSON value with its place in the text.
type node struct {
	kind       byte // '{', '[', '"', or 'v' (number, true, false, null)
	start, end int  // the value's bytes: text[start:end]
	members    []member
	elems      []*node
}

type member struct {
	key      string
	keyStart int
	val      *node
}

// get is the member named key of an object, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- { // the last one wins, as in JSON.parse
		if n.members[i].key == key {
			return n.members[i].val
		}
	}
	return nil
}

type jparser struct {
	s   []byte
	pos int
}

// parseJSONC parses a document whose top level must be an object.
func parseJSONC(s []byte) (*node, error) {
	p := &jparser{s: s}
	p.skip()
	if p.pos == len(s) {
		return nil, fmt.Errorf("empty document")
	}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.pos != len(s) {
		return nil, p.errorf("unexpected %q after the document", s[p.pos])
	}
	if n.kind != '{' {
		return nil, fmt.Errorf("the document is not a JSON object")
	}
	return n, nil
}

func (p *jparser) errorf(format string, a ...any) error {
	line := 1 + bytes.Count(p.s[:min(p.pos, len(p.s))], []byte("\n"))
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, a...))
}

// skip passes whitespace and comments.
func (p *jparser) skip() {
	for p.pos < len(p.s) {
		switch c := p.s[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.s) && p.s[p.pos+1] == '/':
			for p.pos < len(p.s) && p.s[p.pos] != '\n' {
				p.pos++
			}
		case c == '/' && p.pos+1 < len(p.s) && p.s[p.pos+1] == '*':
			end := bytes.Index(p.s[p.pos+2:], []byte("*/"))
			if end < 0 {
				p.pos = len(p.s)
				return
			}
			p.pos += end + 4
		default:
			return
		}
	}
}

const maxDepth = 200

func (p *jparser) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.errorf("nested too deeply")
	}
	if p.pos >= len(p.s) {
		return nil, p.errorf("unexpected end")
	}
	start := p.pos
	switch c := p.s[p.pos]; c {
	case '{':
		n := &node{kind: '{', start: start}
		return p.items(n, '}', func() error {
			if p.pos >= len(p.s) || p.s[p.pos] != '"' {
				return p.errorf("expected a member name")
			}
			keyStart := p.pos
			k, err := p.str()
			if err != nil {
				return err
			}
			p.skip()
			if p.pos >= len(p.s) || p.s[p.pos] != ':' {
				return p.errorf("expected ':' after %q", k.key)
			}
			p.pos++
			p.skip()
			v, err := p.value(depth + 1)
			if err != nil {
				return err
			}
			n.members = append(n.members, member{key: k.key, keyStart: keyStart, val: v})
			return nil
		})
	case '[':
		n := &node{kind: '[', start: start}
		return p.items(n, ']', func() error {
			v, err := p.value(depth + 1)
			if err != nil {
				return err
			}
			n.elems = append(n.elems, v)
			return nil
		})
	case '"':
		if _, err := p.str(); err != nil {
			return nil, err
		}
		return &node{kind: '"', start: start, end: p.pos}, nil
	default:
		for p.pos < len(p.s) && strings.IndexByte("+-.0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", p.s[p.pos]) >= 0 {
			p.pos++
		}
		if p.pos == start {
			return nil, p.errorf("unexpected %q", c)
		}
		var v any
		if json.Unmarshal(p.s[start:p.pos], &v) != nil {
			return nil, p.errorf("bad value %q", p.s[start:p.pos])
		}
		return &node{kind: 'v', start: start, end: p.pos}, nil
	}
}

// items reads the members or elements of n, an object or array whose
// opening bracket is at p.pos, up to close: item reads one, and commas
// between them (and one trailing comma, as JSONC allows) are skipped.
func (p *jparser) items(n *node, close byte, item func() error) (*node, error) {
	p.pos++
	for {
		p.skip()
		if p.pos < len(p.s) && p.s[p.pos] == close {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		if err := item(); err != nil {
			return nil, err
		}
		p.skip()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.s) && p.s[p.pos] == close {
			continue
		}
		return nil, p.errorf("expected ',' or '%c'", close)
	}
}

type strTok struct{ key string }

// str reads a string token.
func (p *jparser) str() (strTok, error) {
	start := p.pos
	p.pos++
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case '\\':
			p.pos += 2
			continue
		case '"':
			p.pos++
			var s string
			if err := json.Unmarshal(p.s[start:p.pos], &s); err != nil {
				return strTok{}, p.errorf("bad string: %v", err)
			}
			return strTok{key: s}, nil
		case '\n':
			return strTok{}, p.errorf("newline in a string")
		}
		p.pos++
	}
	return strTok{}, p.errorf("unterminated string")
}

// decode is a node's value as Go's encoding/json reads it.
func decode(text []byte, n *node) any {
	var v any
	_ = json.Unmarshal(compact(text, n, nil), &v)
	return v
}

// compact appends a node's value as plain JSON: what the parser read,
// without the comments and trailing commas JSONC allows.
func compact(text []byte, n *node, out []byte) []byte {
	switch n.kind {
	case '{':
		out = append(out, '{')
		for i, m := range n.members {
			if i > 0 {
				out = append(out, ',')
			}
			k, _ := json.Marshal(m.key)
			out = append(append(out, k...), ':')
			out = compact(text, m.val, out)
		}
		return append(out, '}')
	case '[':
		out = append(out, '[')
		for i, e := range n.elems {
			if i > 0 {
				out = append(out, ',')
			}
			out = compact(text, e, out)
		}
		return append(out, ']')
	}
	return append(out, text[n.start:n.end]...)
}

// sameJSON reports whether two values are the same JSON, whatever the
// order of their objects' members.
func sameJSON(a, b any) bool {
	canonical := func(v any) ([]byte, error) {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		var plain any
		if err := json.Unmarshal(raw, &plain); err != nil {
			return nil, err
		}
		return json.Marshal(plain) // maps: keys sorted
	}
	x, err1 := canonical(a)
	y, err2 := canonical(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// lineStart is the offset of the start of the line holding pos.
func lineStart(s []byte, pos int) int {
	return bytes.LastIndexByte(s[:pos], '\n') + 1
}

// indentOf is the leading whitespace of the line holding pos.
func indentOf(s []byte, pos int) string {
	ls := lineStart(s, pos)
	i := ls
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return string(s[ls:i])
}

// ownLine reports whether only whitespace precedes pos on its line.
func ownLine(s []byte, pos int) bool {
	return strings.TrimLeft(string(s[lineStart(s, pos):pos]), " \t") == ""
}

// indentUnit guesses the file's indentation step (two spaces when the
// file says nothing).
func indentUnit(s []byte) string {
	for _, line := range strings.Split(string(s), "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed != "" && len(trimmed) < len(line) {
			return line[:len(line)-len(trimmed)]
		}
	}
	return "  "
}

// lineEndAfter is where text may be added after pos on its line: past a
// trailing comment, before the newline (or at pos when code follows).
func lineEndAfter(s []byte, pos int) int {
	i := pos
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i+1 < len(s) && s[i] == '/' && s[i+1] == '/' {
		for i < len(s) && s[i] != '\n' && s[i] != '\r' {
			i++
		}
		return i
	}
	return pos
}

// commaAfter is the offset of the comma that follows a value (skipping
// whitespace and comments), or -1.
func commaAfter(s []byte, pos int) int {
	p := &jparser{s: s, pos: pos}
	p.skip()
	if p.pos < len(s) && s[p.pos] == ',' {
		return p.pos
	}
	return -1
}

// marshalAt formats v for insertion at an indentation.
func marshalAt(v any, indent, unit string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(indent, unit)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// splice replaces text[from:to] by with.
func splice(text []byte, from, to int, with string) []byte {
	out := make([]byte, 0, len(text)+len(with))
	out = append(out, text[:from]...)
	out = append(out, with...)
	return append(out, text[to:]...)
}

// insertInto adds an item (a "key": value member, or an element) as the
// last one of a container node, on a line of its own.
func insertInto(text []byte, c *node, item func(indent string) string) []byte {
	unit := indentUnit(text)
	var last *node
	if c.kind == '{' && len(c.members) > 0 {
		last = c.members[len(c.members)-1].val
	} else if c.kind == '[' && len(c.elems) > 0 {
		last = c.elems[len(c.elems)-1]
	}
	if last == nil {
		indent := indentOf(text, c.start) + unit
		inner := strings.TrimSpace(string(text[c.start+1 : c.end-1]))
		if inner == "" {
			return splice(text, c.start+1, c.end-1, "\n"+indent+item(indent)+"\n"+indentOf(text, c.start))
		}
		return splice(text, c.start+1, c.start+1, "\n"+indent+item(indent)) // before comments
	}
	var first int
	if c.kind == '{' {
		first = c.members[0].keyStart
	} else {
		first = c.elems[0].start
	}
	indent := indentOf(text, first)
	if !ownLine(text, first) {
		indent = indentOf(text, c.start) + unit
	}
	if comma := commaAfter(text, last.end); comma >= 0 { // a trailing comma
		at := lineEndAfter(text, comma+1)
		return splice(text, at, at, "\n"+indent+item(indent)+",")
	}
	at := lineEndAfter(text, last.end)
	out := splice(text, at, at, "\n"+indent+item(indent))
	return splice(out, last.end, last.end, ",")
}

// removeFrom takes the i-th item (member or element) out of a container
// node, with its line and the comma that went with it.
func removeFrom(text []byte, c *node, i int) []byte {
	starts := func(j int) int {
		if c.kind == '{' {
			return c.members[j].keyStart
		}
		return c.elems[j].start
	}
	ends := func(j int) int {
		if c.kind == '{' {
			return c.members[j].val.end
		}
		return c.elems[j].end
	}
	n := len(c.elems)
	if c.kind == '{' {
		n = len(c.members)
	}
	start, end := starts(i), ends(i)
	switch {
	case n == 1:
		rest := strings.TrimSpace(string(text[c.start+1:start]) + string(text[end:c.end-1]))
		if rest == "" || rest == "," {
			return splice(text, c.start+1, c.end-1, "")
		}
		if comma := commaAfter(text, end); comma >= 0 {
			end = comma + 1
		}
		if ownLine(text, start) {
			start = lineStart(text, start) - 1
		}
		return splice(text, start, end, "")
	case i < n-1:
		next := starts(i + 1)
		if ownLine(text, start) && ownLine(text, next) {
			return splice(text, lineStart(text, start), lineStart(text, next), "")
		}
		return splice(text, start, next, "")
	default:
		prevEnd := ends(i - 1)
		comma := commaAfter(text, prevEnd)
		if trailing := commaAfter(text, end); trailing >= 0 {
			end = trailing + 1 // keep the file's trailing-comma style on the new last item
			comma = -1
		}
		from := start
		if ownLine(text, start) {
			from = lineStart(text, start) - 1
		}
		out := splice(text, from, end, "")
		if comma >= 0 {
			out = splice(out, comma, comma+1, "")
		}
		return out
	}
}

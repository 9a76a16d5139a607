package agentsetup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// obj is a JSON object whose members keep their order when written.
type obj []kv

type kv struct {
	k string
	v any
}

// MarshalJSON writes the members in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(m.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// jsonDoc is a JSON(C) file's text being edited.
type jsonDoc struct {
	text []byte
	name string // for errors
}

func (d *jsonDoc) root() (*node, error) {
	n, err := parseJSONC(d.text)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not valid JSON (%v); fix it or move it aside, nothing was changed", ErrConfig, d.name, err)
	}
	return n, nil
}

// walk follows object keys from the root; missing keys give nil.
func (d *jsonDoc) walk(path []string) (*node, error) {
	n, err := d.root()
	if err != nil {
		return nil, err
	}
	for i, k := range path {
		if n.kind != '{' {
			return nil, fmt.Errorf("%w: %s: %s is not an object; nothing was changed", ErrConfig, d.name, strings.Join(path[:i], "."))
		}
		if n = n.get(k); n == nil {
			return nil, nil
		}
	}
	return n, nil
}

// ensure makes the container at path exist (kind '{' or '['), creating
// missing objects on the way, and returns it.
func (d *jsonDoc) ensure(path []string, kind byte) (*node, error) {
	for depth := 0; ; depth++ {
		n, err := d.root()
		if err != nil {
			return nil, err
		}
		var i int
		for i = 0; i < len(path); i++ {
			c := n.get(path[i])
			if c == nil {
				break
			}
			n = c
		}
		if i == len(path) {
			want := "an object"
			if kind == '[' {
				want = "a list"
			}
			if n.kind != kind {
				return nil, fmt.Errorf("%w: %s: %s is not %s; nothing was changed", ErrConfig, d.name, strings.Join(path, "."), want)
			}
			return n, nil
		}
		if n.kind != '{' {
			return nil, fmt.Errorf("%w: %s: %s is not an object; nothing was changed", ErrConfig, d.name, strings.Join(path[:i], "."))
		}
		var empty any = obj{}
		if i == len(path)-1 && kind == '[' {
			empty = []any{}
		}
		d.text = insertInto(d.text, n, d.member(path[i], empty))
		if depth > len(path) {
			return nil, fmt.Errorf("%s: cannot create %s", d.name, strings.Join(path, "."))
		}
	}
}

// set makes path.key hold v; it reports whether the text changed.
func (d *jsonDoc) set(path []string, key string, v any) (bool, error) {
	parent, err := d.ensure(path, '{')
	if err != nil {
		return false, err
	}
	if cur := parent.get(key); cur != nil {
		if sameJSON(decode(d.text, cur), v) {
			return false, nil
		}
		d.text = splice(d.text, cur.start, cur.end, marshalAt(v, indentOf(d.text, cur.start), indentUnit(d.text)))
		return true, nil
	}
	d.text = insertInto(d.text, parent, d.member(key, v))
	return true, nil
}

// member writes "key": v at an indentation, for insertInto.
func (d *jsonDoc) member(key string, v any) func(indent string) string {
	unit := indentUnit(d.text)
	return func(indent string) string {
		k, _ := json.Marshal(key)
		return string(k) + ": " + marshalAt(v, indent, unit)
	}
}

// appendTo adds v to the list at path unless has finds it there already.
func (d *jsonDoc) appendTo(path []string, v any, has func(elem any) bool) (bool, error) {
	list, err := d.ensure(path, '[')
	if err != nil {
		return false, err
	}
	for _, e := range list.elems {
		if has(decode(d.text, e)) {
			return false, nil
		}
	}
	unit := indentUnit(d.text)
	d.text = insertInto(d.text, list, func(indent string) string { return marshalAt(v, indent, unit) })
	return true, nil
}

// unset removes path.key; then path's containers that this left empty.
func (d *jsonDoc) unset(path []string, key string) (bool, error) {
	parent, err := d.walk(path)
	if err != nil || parent == nil || parent.kind != '{' {
		return false, err
	}
	for i, m := range parent.members {
		if m.key == key {
			d.text = removeFrom(d.text, parent, i)
			return true, d.prune(path)
		}
	}
	return false, nil
}

// removeWhere removes the elements of the list at path that match; then
// the containers this left empty.
func (d *jsonDoc) removeWhere(path []string, match func(elem any) bool) (bool, error) {
	changed := false
	for {
		list, err := d.walk(path)
		if err != nil || list == nil || list.kind != '[' {
			return changed, err
		}
		found := -1
		for i, e := range list.elems {
			if match(decode(d.text, e)) {
				found = i
				break
			}
		}
		if found < 0 {
			if changed {
				return true, d.prune(path)
			}
			return false, nil
		}
		d.text = removeFrom(d.text, list, found)
		changed = true
	}
}

// prune removes the container at path, and then its parents, while they
// are empty (never the document itself).
func (d *jsonDoc) prune(path []string) error {
	for len(path) > 0 {
		n, err := d.walk(path)
		if err != nil || n == nil || len(n.members) > 0 || len(n.elems) > 0 || (n.kind != '{' && n.kind != '[') {
			return err
		}
		if strings.TrimSpace(string(d.text[n.start+1:n.end-1])) != "" {
			return nil // comments
		}
		parent, err := d.walk(path[:len(path)-1])
		if err != nil {
			return err
		}
		for i, m := range parent.members {
			if m.key == path[len(path)-1] {
				d.text = removeFrom(d.text, parent, i)
				break
			}
		}
		path = path[:len(path)-1]
	}
	return nil
}

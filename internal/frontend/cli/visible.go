package cli

import (
	"bytes"
	"fmt"
	"io"
	"unicode/utf8"
)

// visible is a writer that renders control characters visibly, as git
// renders a remote's messages: ESC as ^[, DEL as ^?, a C1 control as
// \u0085. Author names, session and agent ids come from teammates and
// agents, so what they hold must not drive the terminal. Newline and tab
// pass, and so do the colour codes the CLI writes itself (output.go).
type visible struct{ w io.Writer }

// ownCodes are the escape sequences the CLI writes itself.
var ownCodes = [][]byte{[]byte(yellow), []byte(dim), []byte(reset)}

func (v visible) Write(p []byte) (int, error) {
	i := 0
	for i < len(p) && safeAt(p, i) {
		i++
	}
	if i == len(p) {
		return v.w.Write(p)
	}
	var b bytes.Buffer
	b.Grow(len(p) + 16)
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\x1b' && ownCode(p[i:]) > 0:
			n := ownCode(p[i:])
			b.Write(p[i : i+n])
			i += n
		case c < 0x20 && c != '\n' && c != '\t':
			b.WriteByte('^')
			b.WriteByte(c + '@')
			i++
		case c == 0x7f:
			b.WriteString("^?")
			i++
		case c == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f:
			r, _ := utf8.DecodeRune(p[i:])
			fmt.Fprintf(&b, `\u%04x`, r)
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	if _, err := v.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// safeAt reports whether p[i] passes unchanged.
func safeAt(p []byte, i int) bool {
	c := p[i]
	if c < 0x20 {
		return c == '\n' || c == '\t'
	}
	return c != 0x7f && (c != 0xc2 || i+1 >= len(p) || p[i+1] < 0x80 || p[i+1] > 0x9f)
}

func ownCode(p []byte) int {
	for _, code := range ownCodes {
		if bytes.HasPrefix(p, code) {
			return len(code)
		}
	}
	return 0
}

// unwrapped is the writer under w, for a child process (the pager) that
// writes its own escapes.
func unwrapped(w io.Writer) io.Writer {
	if v, ok := w.(visible); ok {
		return v.w
	}
	return w
}

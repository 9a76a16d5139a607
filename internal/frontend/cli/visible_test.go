package cli

import (
	"bytes"
	"testing"
)

func TestVisibleRendersControlCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\n":                 "plain\ttext\n",
		yellow + "3f2a" + reset + " ok": yellow + "3f2a" + reset + " ok",
		"Eve\x1b]0;pwned\x07\x1b[2J":    "Eve^[]0;pwned^G^[[2J",
		"cr\r del\x7f c1\u009b31m":      `cr^M del^? c1\u009b31m`,
		"héllo wörld":                   "héllo wörld",
	} {
		var b bytes.Buffer
		n, err := visible{&b}.Write([]byte(in))
		if err != nil || n != len(in) || b.String() != want {
			t.Errorf("Write(%q) = %d, %v, wrote %q; want %q", in, n, err, b.String(), want)
		}
	}
}

package secrets

import (
	"encoding/base64"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Credentials hide behind encodings as easily as behind case: a key in a
// query string (key%3DAKIA…), a JSON string (\u003d), HTML (&#61;) or a
// base64 blob. scan looks at the decoded text as well as the text.

// htmlNames are the named entities that matter around credentials.
var htmlNames = map[string]string{"amp": "&", "quot": `"`, "apos": "'", "lt": "<", "gt": ">", "equals": "=", "colon": ":", "sol": "/", "num": "#", "percnt": "%", "plus": "+"}

// unescape decodes percent escapes, backslash escapes (\xHH, \uHHHH, \/)
// and HTML character references in one pass. at maps every byte of the
// result, and its end, to the offset in text it came from. ok is false
// when there was nothing to decode.
func unescape(text string) (dec string, at []int, ok bool) {
	if !strings.ContainsAny(text, `%\&`) {
		return "", nil, false
	}
	var b strings.Builder
	at = make([]int, 0, len(text)+1)
	emit := func(s string, from int) {
		b.WriteString(s)
		for range len(s) {
			at = append(at, from)
		}
	}
	for i := 0; i < len(text); {
		if s, n := escapeAt(text, i); n > 0 {
			emit(s, i)
			i += n
			ok = true
			continue
		}
		emit(text[i:i+1], i)
		i++
	}
	at = append(at, len(text))
	return b.String(), at, ok
}

// escapeAt decodes the escape starting at text[i], returning what it
// stands for and its length, or n = 0 when there is none.
func escapeAt(text string, i int) (s string, n int) {
	rest := text[i:]
	switch rest[0] {
	case '%':
		if len(rest) >= 3 {
			if v, err := strconv.ParseUint(rest[1:3], 16, 8); err == nil {
				return string(rune(v)), 3
			}
		}
	case '\\':
		switch {
		case len(rest) >= 6 && rest[1] == 'u':
			if v, err := strconv.ParseUint(rest[2:6], 16, 16); err == nil {
				return string(rune(v)), 6
			}
		case len(rest) >= 4 && rest[1] == 'x':
			if v, err := strconv.ParseUint(rest[2:4], 16, 8); err == nil {
				return string(rune(v)), 4
			}
		case len(rest) >= 2 && rest[1] == '/':
			return "/", 2
		}
	case '&':
		end := strings.IndexByte(rest, ';')
		if end < 2 || end > 10 {
			return "", 0
		}
		ref := rest[1:end]
		if num, isNum := strings.CutPrefix(ref, "#"); isNum {
			base := 10
			if h, isHex := strings.CutPrefix(strings.ToLower(num), "x"); isHex {
				num, base = h, 16
			}
			if v, err := strconv.ParseUint(num, base, 21); err == nil && utf8.ValidRune(rune(v)) {
				return string(rune(v)), end + 1
			}
			return "", 0
		}
		if v, found := htmlNames[strings.ToLower(ref)]; found {
			return v, end + 1
		}
	}
	return "", 0
}

// b64run is a run of base64 in a text and the printable text it decodes to.
type b64run struct {
	start, end int
	decoded    string
}

// minBase64 is the shortest run worth decoding: 20 characters hold 15
// bytes, less than any credential a rule knows with its prefix.
const minBase64 = 20

// base64Runs returns the runs of base64 in text that decode to printable
// text. Identifiers, hashes and binary data decode to bytes that are not,
// and are left alone.
func base64Runs(text string) []b64run {
	var out []b64run
	for i := 0; i < len(text); {
		if !isBase64(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isBase64(text[j]) {
			j++
		}
		end := j
		for end < len(text) && end-j < 2 && text[end] == '=' {
			end++
		}
		if j-i >= minBase64 {
			if d, ok := decodeBase64(text[i:end]); ok {
				out = append(out, b64run{i, end, d})
			}
		}
		i = end
		if i == j && j < len(text) {
			i++
		}
	}
	return out
}

func isBase64(c byte) bool {
	return isAlnum(c) || c == '+' || c == '/' || c == '-' || c == '_'
}

// decodeBase64 decodes s in whichever alphabet it uses, and reports
// whether the result is text: valid UTF-8, at least 90% printable.
func decodeBase64(s string) (string, bool) {
	body := strings.TrimRight(s, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(body, "-_") {
		enc = base64.RawURLEncoding
	}
	d, err := enc.DecodeString(body)
	if err != nil || !utf8.Valid(d) {
		return "", false
	}
	printable := 0
	for _, c := range d {
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' || c >= 0x80 {
			printable++
		}
	}
	return string(d), printable*10 >= len(d)*9
}

// Package secrets finds text that looks like a credential, so that it never
// reaches memory that is pushed to a shared remote.
package secrets

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// ErrSecret marks content refused because it looks like a credential.
var ErrSecret = errors.New("content looks like a secret")

// Finding is one suspected credential.
type Finding struct {
	Field  string // the document field it is in ("" for plain text)
	Kind   string // what it looks like, e.g. "AWS access key id"
	Line   int    // 1-based line number
	Masked string // the match with most characters hidden
}

type rule struct {
	kind string
	// keywords: the rule runs only if the lower-cased text holds one of
	// them, so ordinary text costs a few substring searches and no regexp
	// (compiling them dominated a save).
	keywords []string
	pattern  string
	re       func() *regexp.Regexp
	// group is the submatch holding the secret value; 0 means the whole match.
	group int
	// minEntropy, when > 0, is the Shannon entropy (bits per character) the
	// value must reach, so placeholders and plain words pass.
	minEntropy float64
	// token: the pattern is a prefixed token that must not continue a
	// word or number on its left. Checked in Scan rather than with \b,
	// which fails after "_": AWS_KEY_AKIA… would pass.
	token bool
	// mixed: the value must mix at least two of lower case, upper case
	// and digits, as generated tokens do and words (resource_metadata=)
	// do not.
	mixed bool
}

// rules are built on first use; each rule's regexp compiles only when its
// keywords appear.
var rules = sync.OnceValue(func() []rule {
	rs := []rule{
		{kind: "private key block", keywords: []string{"private key"}, pattern: `-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`},
		{kind: "AWS access key id", keywords: []string{"akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "a3t"}, pattern: `(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}`},
		{kind: "AWS secret access key", keywords: []string{"aws"}, pattern: `(?i)aws.{0,20}?(?:secret|private).{0,20}?['"]?\s*[:=]\s*['"]?([A-Za-z0-9/+=]{40})\b`, group: 1, minEntropy: 3.5},
		{kind: "GitHub token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, pattern: `(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})`},
		{kind: "GitLab token", keywords: []string{"glpat-", "glptt-", "gldt-", "glrt-"}, pattern: `(?:glpat|glptt|gldt|glrt)-[A-Za-z0-9_-]{20,}`},
		{kind: "Slack token", keywords: []string{"xox"}, pattern: `xox[abposre]-[A-Za-z0-9-]{10,}`},
		{kind: "Slack webhook", keywords: []string{"hooks.slack.com"}, pattern: `https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/]{20,}`},
		{kind: "OpenAI API key", keywords: []string{"sk-"}, pattern: `sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`, minEntropy: 3.5, token: true},
		{kind: "Anthropic API key", keywords: []string{"sk-ant-"}, pattern: `sk-ant-[A-Za-z0-9_-]{20,}`},
		{kind: "Google API key", keywords: []string{"aiza"}, pattern: `AIza[0-9A-Za-z_-]{35}`, token: true},
		{kind: "Stripe key", keywords: []string{"_live_", "_test_", "_prod_"}, pattern: `(?:sk|rk)_(?:live|test|prod)_[0-9A-Za-z]{20,}`, token: true},
		{kind: "npm token", keywords: []string{"npm_"}, pattern: `npm_[A-Za-z0-9]{36}`},
		{kind: "PyPI token", keywords: []string{"pypi-"}, pattern: `pypi-AgE[A-Za-z0-9_-]{50,}`},
		{kind: "SendGrid API key", keywords: []string{"sg."}, pattern: `SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}`},
		{kind: "Twilio API key", keywords: []string{"sk"}, pattern: `SK[0-9a-f]{32}`, minEntropy: 3.0, token: true},
		{kind: "Mailchimp API key", keywords: []string{"-us"}, pattern: `[0-9a-f]{32}-us[0-9]{1,2}`, token: true},
		{kind: "Telegram bot token", keywords: []string{":aa"}, pattern: `[0-9]{8,10}:AA[0-9A-Za-z_-]{33}`, token: true},
		{kind: "Hugging Face token", keywords: []string{"hf_"}, pattern: `hf_[A-Za-z]{34}`, minEntropy: 3.5, token: true},
		{kind: "DigitalOcean token", keywords: []string{"dop_v1_", "doo_v1_", "dor_v1_"}, pattern: `do[opr]_v1_[a-f0-9]{64}`},
		{kind: "Shopify token", keywords: []string{"shpat_", "shpca_", "shppa_", "shpss_"}, pattern: `shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`},
		{kind: "Square token", keywords: []string{"sq0atp-", "sq0csp-", "eaaa"}, pattern: `(?:sq0atp-[0-9A-Za-z_-]{22}|sq0csp-[0-9A-Za-z_-]{43}|EAAA[A-Za-z0-9_-]{60})`, token: true},
		{kind: "Databricks token", keywords: []string{"dapi"}, pattern: `dapi[a-f0-9]{32}(?:-[0-9])?`, token: true},
		{kind: "Postman API key", keywords: []string{"pmak-"}, pattern: `PMAK-[a-f0-9]{24}-[a-f0-9]{34}`},
		{kind: "age secret key", keywords: []string{"age-secret-key-"}, pattern: `AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`},
		{kind: "Azure storage key", keywords: []string{"accountkey"}, pattern: `(?i)AccountKey=([A-Za-z0-9+/]{86}==)`, group: 1},
		{kind: "JSON web token", keywords: []string{"eyj"}, pattern: `eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`},
		{kind: "password in URL", keywords: []string{"://"}, pattern: `[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s@/]{6,})@`, group: 1, minEntropy: 2.5},
		{kind: "authorization header", keywords: []string{"authorization", "bearer"}, pattern: `(?i)(?:\bauthorization["']?\s*[:=]\s*["']?(?:bearer|basic|token|bot)|\bbearer)\s+([A-Za-z0-9._~+/-]{12,}=*)`, group: 1, minEntropy: 3.0, mixed: true},
		// The name may carry a prefix joined by _, . or - (DB_PASSWORD,
		// STRIPE_API_KEY, MYSQL_PWD), not one glued to it (AllowSecret).
		{kind: "credential assignment", keywords: []string{"pass", "pwd", "secret", "key", "token", "credential"}, pattern: `(?i)(?:^|[^a-z0-9])(?:[a-z0-9]+[_.-])*(?:password|passwd|passphrase|pwd|secret|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|token|credentials?)["']?\s*(?::|=|:=|=>)\s*["']?([^\s"',;&]{8,})`, group: 1, minEntropy: 3.0},
	}
	for i := range rs {
		rs[i].re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(rs[i].pattern) })
	}
	return rs
})

// placeholders are values that look like assignments but hold no secret:
// variables, templates, masks, paths, and code (os.Args[4],
// request.Params.Token, refreshToken).
var placeholder = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(?:\$\{?[A-Z_][A-Z0-9_]*\}?|<[^>]*>|\{\{.*\}\}|x{3,}|\*{3,}|\.{3,}|changeme|redacted|example\w*|your[_-].*|dummy\w*|placeholder|os\.getenv.*|process\.env.*|env\[.*|~?\.{0,2}/[\w./-]*|[a-z_]\w*(?:\.[a-z_]\w*)+(?:\[\w*\]|\(\))?|(?-i:[a-z]+(?:[A-Z][a-z]+)+))$`)
})

// Scan returns every suspected credential in text.
func Scan(text string) []Finding {
	var out []Finding
	for _, m := range scan(text) {
		out = append(out, m.Finding)
	}
	return out
}

// match is a finding with the byte span of its value in the text.
type match struct {
	Finding
	start, end int
}

// scan finds credentials in text as written and, where text holds
// escapes (%3D, \u003d, &#61;, base64), in its decoded form too; every
// span is one of text.
func scan(text string) []match {
	out := scanPlain(text, nil)
	if dec, at, ok := unescape(text); ok {
		out = appendNew(out, scanPlain(dec, at))
	}
	for _, b := range base64Runs(text) {
		for _, m := range scanPlain(b.decoded, nil) {
			m.Kind += " (base64-encoded)"
			m.start, m.end = b.start, b.end
			out = appendNew(out, []match{m})
		}
	}
	for i := range out {
		out[i].Line = 1 + strings.Count(text[:out[i].start], "\n")
	}
	return out
}

// appendNew adds the matches of more whose spans out does not hold yet.
func appendNew(out, more []match) []match {
	for _, m := range more {
		dup := false
		for _, o := range out {
			dup = dup || (o.start == m.start && o.end == m.end)
		}
		if !dup {
			out = append(out, m)
		}
	}
	return out
}

// scanPlain runs the rules over text; at, when not nil, maps each byte
// of text (and its end) to the offset in the original it came from.
func scanPlain(text string, at []int) []match {
	var out []match
	lower := strings.ToLower(text)
	for _, r := range rules() {
		if !containsAny(lower, r.keywords) {
			continue
		}
		for _, m := range r.re().FindAllStringSubmatchIndex(text, -1) {
			start, end := m[0], m[1]
			if r.group > 0 {
				start, end = m[2*r.group], m[2*r.group+1]
			}
			if r.token && start > 0 && isAlnum(text[start-1]) {
				continue
			}
			value := text[start:end]
			if r.minEntropy > 0 && (placeholder().MatchString(value) || Entropy(value) < r.minEntropy) || r.mixed && !isMixed(value) {
				continue
			}
			if at != nil {
				start, end = at[start], at[end]
			}
			out = append(out, match{Finding{Kind: r.kind, Masked: mask(value)}, start, end})
		}
	}
	return out
}

// Redact replaces every suspected credential in text with "[redacted
// KIND]" and says how many it replaced. Overlapping findings are
// replaced once, by the leftmost.
func Redact(text string) (string, int) {
	ms := scan(text)
	if len(ms) == 0 {
		return text, 0
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].start < ms[j].start })
	var b strings.Builder
	at, n := 0, 0
	for _, m := range ms {
		if m.start < at {
			continue
		}
		b.WriteString(text[at:m.start])
		b.WriteString("[redacted " + m.Kind + "]")
		at = m.end
		n++
	}
	b.WriteString(text[at:])
	return b.String(), n
}

// Check returns an error wrapping ErrSecret that lists the findings, or nil.
func Check(text string) error {
	return Error(Scan(text))
}

// Field is one named text of a document.
type Field struct{ Name, Text string }

// ScanFields scans every field and names the field of each finding.
func ScanFields(fields []Field) []Finding {
	var out []Finding
	for _, f := range fields {
		for _, x := range Scan(f.Text) {
			x.Field = f.Name
			out = append(out, x)
		}
	}
	return out
}

// Error is an error wrapping ErrSecret that lists the findings, or nil
// when there are none.
func Error(f []Finding) error {
	if len(f) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrSecret, Describe(f))
}

// Describe lists findings for a person, values masked.
func Describe(f []Finding) string {
	parts := make([]string, len(f))
	for i, x := range f {
		where := ""
		if x.Field != "" {
			where = " in " + x.Field
		}
		parts[i] = fmt.Sprintf("%s%s on line %d (%s)", x.Kind, where, x.Line, x.Masked)
	}
	return strings.Join(parts, "; ")
}

// Entropy is the Shannon entropy of s in bits per character.
func Entropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	n := 0
	for _, r := range s {
		counts[r]++
		n++
	}
	var h float64
	for _, c := range counts {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	return h
}

func mask(s string) string {
	if len(s) <= 8 {
		return strings.Repeat("*", len(s))
	}
	return s[:4] + strings.Repeat("*", 6) + s[len(s)-2:]
}

func isMixed(s string) bool {
	var lower, upper, digit int
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z':
			lower = 1
		case c >= 'A' && c <= 'Z':
			upper = 1
		case c >= '0' && c <= '9':
			digit = 1
		}
	}
	return lower+upper+digit >= 2
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func containsAny(s string, keywords []string) bool {
	for _, k := range keywords {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

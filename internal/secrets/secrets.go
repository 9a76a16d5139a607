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
}

// rules are built on first use; each rule's regexp compiles only when its
// keywords appear.
var rules = sync.OnceValue(func() []rule {
	rs := []rule{
		{kind: "private key block", keywords: []string{"private key"}, pattern: `-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`},
		{kind: "AWS access key id", keywords: []string{"akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "aipa"}, pattern: `(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}`, token: true},
		{kind: "AWS secret access key", keywords: []string{"aws"}, pattern: `(?i)aws.{0,20}?(?:secret|private).{0,20}?['"]?\s*[:=]\s*['"]?([A-Za-z0-9/+=]{40})\b`, group: 1, minEntropy: 3.5},
		{kind: "GitHub token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, pattern: `(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})`, token: true},
		{kind: "GitLab token", keywords: []string{"glpat-"}, pattern: `glpat-[A-Za-z0-9_-]{20,}`, token: true},
		{kind: "Slack token", keywords: []string{"xox"}, pattern: `xox[abposr]-[A-Za-z0-9-]{10,}`, token: true},
		{kind: "Slack webhook", keywords: []string{"hooks.slack.com"}, pattern: `https://hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+`},
		{kind: "OpenAI API key", keywords: []string{"sk-"}, pattern: `sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`, minEntropy: 3.5, token: true},
		{kind: "Anthropic API key", keywords: []string{"sk-ant-"}, pattern: `sk-ant-[A-Za-z0-9_-]{20,}`, token: true},
		{kind: "Google API key", keywords: []string{"aiza"}, pattern: `AIza[0-9A-Za-z_-]{35}`, token: true},
		{kind: "Stripe secret key", keywords: []string{"_live_"}, pattern: `[rs]k_live_[0-9A-Za-z]{20,}`, token: true},
		{kind: "npm token", keywords: []string{"npm_"}, pattern: `npm_[A-Za-z0-9]{36}`, token: true},
		{kind: "JSON web token", keywords: []string{"eyj"}, pattern: `eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`, token: true},
		{kind: "password in URL", keywords: []string{"://"}, pattern: `[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s@/]{6,})@`, group: 1, minEntropy: 2.5},
		{kind: "credential assignment", keywords: []string{"pass", "pwd", "secret", "key", "token"}, pattern: `(?i)\b(?:password|passwd|pwd|secret|client_secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|private[_-]?key)\b["']?\s*(?::|=|:=|=>)\s*["']?([^\s"',;]{8,})`, group: 1, minEntropy: 3.0},
	}
	for i := range rs {
		rs[i].re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(rs[i].pattern) })
	}
	return rs
})

// placeholders are values that look like assignments but hold no secret.
var placeholder = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(?:\$\{?[A-Z_][A-Z0-9_]*\}?|<[^>]*>|\{\{.*\}\}|x{3,}|\*{3,}|\.{3,}|changeme|redacted|example\w*|your[_-].*|dummy\w*|placeholder|os\.getenv.*|process\.env.*|env\[.*)$`)
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

func scan(text string) []match {
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
			if r.minEntropy > 0 && (placeholder().MatchString(value) || Entropy(value) < r.minEntropy) {
				continue
			}
			out = append(out, match{Finding{Kind: r.kind, Line: 1 + strings.Count(text[:start], "\n"), Masked: mask(value)}, start, end})
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

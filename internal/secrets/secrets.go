// Package secrets finds text that looks like a credential, so that it never
// reaches memory that is pushed to a shared remote.
package secrets

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
)

// ErrSecret marks content refused because it looks like a credential.
var ErrSecret = errors.New("content looks like a secret")

// Finding is one suspected credential.
type Finding struct {
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
}

// rules are built on first use; each rule's regexp compiles only when its
// keywords appear.
var rules = sync.OnceValue(func() []rule {
	rs := []rule{
		{kind: "private key block", keywords: []string{"private key"}, pattern: `-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`},
		{kind: "AWS access key id", keywords: []string{"akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "aipa"}, pattern: `\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b`},
		{kind: "AWS secret access key", keywords: []string{"aws"}, pattern: `(?i)aws.{0,20}?(?:secret|private).{0,20}?['"]?\s*[:=]\s*['"]?([A-Za-z0-9/+=]{40})\b`, group: 1, minEntropy: 3.5},
		{kind: "GitHub token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, pattern: `\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`},
		{kind: "GitLab token", keywords: []string{"glpat-"}, pattern: `\bglpat-[A-Za-z0-9_-]{20,}\b`},
		{kind: "Slack token", keywords: []string{"xox"}, pattern: `\bxox[abposr]-[A-Za-z0-9-]{10,}\b`},
		{kind: "Slack webhook", keywords: []string{"hooks.slack.com"}, pattern: `https://hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+`},
		{kind: "OpenAI API key", keywords: []string{"sk-"}, pattern: `\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}\b`, minEntropy: 3.5},
		{kind: "Anthropic API key", keywords: []string{"sk-ant-"}, pattern: `\bsk-ant-[A-Za-z0-9_-]{20,}\b`},
		{kind: "Google API key", keywords: []string{"aiza"}, pattern: `\bAIza[0-9A-Za-z_-]{35}\b`},
		{kind: "Stripe secret key", keywords: []string{"_live_"}, pattern: `\b[rs]k_live_[0-9A-Za-z]{20,}\b`},
		{kind: "npm token", keywords: []string{"npm_"}, pattern: `\bnpm_[A-Za-z0-9]{36}\b`},
		{kind: "JSON web token", keywords: []string{"eyj"}, pattern: `\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`},
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
			value := text[start:end]
			if r.minEntropy > 0 && (placeholder().MatchString(value) || Entropy(value) < r.minEntropy) {
				continue
			}
			out = append(out, Finding{Kind: r.kind, Line: 1 + strings.Count(text[:start], "\n"), Masked: mask(value)})
		}
	}
	return out
}

// Check returns an error wrapping ErrSecret that lists the findings, or nil.
func Check(text string) error {
	f := Scan(text)
	if len(f) == 0 {
		return nil
	}
	parts := make([]string, len(f))
	for i, x := range f {
		parts[i] = fmt.Sprintf("%s on line %d (%s)", x.Kind, x.Line, x.Masked)
	}
	return fmt.Errorf("%w: %s", ErrSecret, strings.Join(parts, "; "))
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

func containsAny(s string, keywords []string) bool {
	for _, k := range keywords {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

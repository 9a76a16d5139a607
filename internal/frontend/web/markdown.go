package web

import (
	"html"
	"html/template"
	"regexp"
	"strings"
	"sync"
)

// markdown renders memory text as a safe subset of Markdown: paragraphs,
// headings, bullet and numbered lists, fenced code, inline code, bold,
// emphasis and links to http(s) URLs. Every piece of text is escaped first,
// so no tag, attribute or script from memory reaches the page; raw HTML in
// memory shows as text.
func markdown(src string) template.HTML {
	var b strings.Builder
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var para []string
	list := ""
	flush := func() {
		if len(para) > 0 {
			b.WriteString("<p>" + inline(strings.Join(para, "\n")) + "</p>\n")
			para = nil
		}
	}
	closeList := func() {
		if list != "" {
			b.WriteString("</" + list + ">\n")
			list = ""
		}
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "```"):
			flush()
			closeList()
			var code []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				code = append(code, lines[i])
			}
			b.WriteString("<pre><code>" + html.EscapeString(strings.Join(code, "\n")) + "</code></pre>\n")
		case trim == "":
			flush()
			closeList()
		case headingRE().MatchString(trim):
			flush()
			closeList()
			m := headingRE().FindStringSubmatch(trim)
			lvl := string(rune('2' + min(len(m[1])-1, 3))) // # → h2: h1 is the page's
			b.WriteString("<h" + lvl + ">" + inline(m[2]) + "</h" + lvl + ">\n")
		case bulletRE().MatchString(line) || numberRE().MatchString(line):
			flush()
			kind, m := "ul", bulletRE().FindStringSubmatch(line)
			if m == nil {
				kind, m = "ol", numberRE().FindStringSubmatch(line)
			}
			if list != kind {
				closeList()
				b.WriteString("<" + kind + ">\n")
				list = kind
			}
			b.WriteString("<li>" + inline(m[1]) + "</li>\n")
		default:
			closeList()
			para = append(para, line)
		}
	}
	flush()
	closeList()
	return template.HTML(b.String()) // built from escaped text only
}

var (
	headingRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(#{1,6})\s+(.*)$`) })
	bulletRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*[-*+]\s+(.*)$`) })
	numberRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\d+[.)]\s+(.*)$`) })
	codeRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`([^`]+)`") })
	linkRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[([^\]]+)\]\((https?://[^\s()]+)\)`) })
	boldRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\*\*([^*]+)\*\*`) })
	emRE      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[\s(])_([^_]+)_([\s).,;:!?]|$)`) })
)

// inline escapes s, then marks up code spans (whose insides are left
// alone), links, bold and emphasis. The patterns run on escaped text, and
// a link's URL is escaped again as an attribute, so nothing of s can open
// a tag or an attribute.
func inline(s string) string {
	var parts []string
	for {
		loc := codeRE().FindStringIndex(s)
		if loc == nil {
			parts = append(parts, marks(html.EscapeString(s)))
			break
		}
		parts = append(parts, marks(html.EscapeString(s[:loc[0]])), "<code>"+html.EscapeString(s[loc[0]+1:loc[1]-1])+"</code>")
		s = s[loc[1]:]
	}
	return strings.ReplaceAll(strings.Join(parts, ""), "\n", "<br>")
}

func marks(esc string) string {
	esc = linkRE().ReplaceAllStringFunc(esc, func(m string) string {
		sm := linkRE().FindStringSubmatch(m)
		href := html.EscapeString(html.UnescapeString(sm[2]))
		return `<a href="` + href + `" rel="noopener noreferrer nofollow">` + sm[1] + `</a>`
	})
	esc = boldRE().ReplaceAllString(esc, "<strong>$1</strong>")
	return emRE().ReplaceAllString(esc, "$1<em>$2</em>$3")
}

// Package timeexpr reads English time expressions: in a search query
// ("in August 2023", "on 3 May 2024", "last week", "two weeks ago",
// "recently"), resolved against the time the question is asked, and in an
// entry's text ("yesterday I went..."), resolved against when it was
// written. It is pure: no clock of its own, no I/O.
package timeexpr

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Span is a time expression and what it means: the half-open interval
// [From, To), or, for Recent ("recently", "lately"), a preference for what
// is newest.
type Span struct {
	Phrase   string // the words as written
	From, To time.Time
	Recent   bool
}

// Contains reports whether t falls in the span (never for Recent).
func (s Span) Contains(t time.Time) bool {
	return !s.Recent && !t.Before(s.From) && t.Before(s.To)
}

// Overlaps reports whether the spans share a moment (never for Recent).
func (s Span) Overlaps(o Span) bool {
	return !s.Recent && !o.Recent && s.From.Before(o.To) && o.From.Before(s.To)
}

// String says what the span was read as, for --explain.
func (s Span) String() string {
	if s.Recent {
		return fmt.Sprintf("%q → recent first", s.Phrase)
	}
	last := s.To.Add(-time.Nanosecond)
	if s.To.Sub(s.From) <= 24*time.Hour {
		return fmt.Sprintf("%q → %s", s.Phrase, s.From.Format(time.DateOnly))
	}
	return fmt.Sprintf("%q → %s – %s", s.Phrase, s.From.Format(time.DateOnly), last.Format(time.DateOnly))
}

const day = 24 * time.Hour

var months = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
	"june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9,
	"october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}

var numbers = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3, "couple of": 2, "few": 3}

const (
	monthRE = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?`
	yearRE  = `((?:19|20)\d\d)`
	dayRE   = `(\d{1,2})(?:st|nd|rd|th)?`
	countRE = `(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:a )?couple of|(?:a )?few)`
	unitRE  = `(day|week|month|year)s?`
	// a month name alone must follow one of these words ("may" is a verb too)
	leadRE   = `(?:in|during|since|before|after|until|by|of|last|this|early|mid|late|around|from)`
	seasonRE = `(spring|summer|fall|autumn|winter)`
)

// rule is one kind of expression: its pattern and how a match resolves
// against the anchor time.
type rule struct {
	re      *regexp.Regexp
	resolve func(m []string, anchor time.Time) (from, to time.Time, ok bool)
}

var rules = sync.OnceValue(func() []rule {
	c := func(p string) *regexp.Regexp { return regexp.MustCompile(`(?i)\b` + p + `\b`) }
	return []rule{
		// 2023-10-13
		{c(`(\d{4})-(\d{2})-(\d{2})`), func(m []string, a time.Time) (time.Time, time.Time, bool) {
			return dayOf(atoi(m[1]), time.Month(atoi(m[2])), atoi(m[3]), a.Location())
		}},
		// October 13, 2023 / Oct 13th 2023
		{c(monthRE + ` ` + dayRE + `,? ` + yearRE), func(m []string, a time.Time) (time.Time, time.Time, bool) {
			return dayOf(atoi(m[3]), months[strings.ToLower(m[1])], atoi(m[2]), a.Location())
		}},
		// 13 October 2023 / 3 May, 2024 / the 3rd of May 2024
		{c(dayRE + `(?: of)? ` + monthRE + `,? ` + yearRE), func(m []string, a time.Time) (time.Time, time.Time, bool) {
			return dayOf(atoi(m[3]), months[strings.ToLower(m[2])], atoi(m[1]), a.Location())
		}},
		// the last week of August 2023
		{c(`(?:the )?(first|last) week of ` + monthRE + `,? ` + yearRE), func(m []string, a time.Time) (time.Time, time.Time, bool) {
			from, to, ok := monthOf(atoi(m[3]), months[strings.ToLower(m[2])], a.Location())
			if strings.EqualFold(m[1], "first") {
				return from, from.Add(7 * day), ok
			}
			return to.Add(-7 * day), to, ok
		}},
		// August 2023
		{c(monthRE + `,? ` + yearRE), func(m []string, a time.Time) (time.Time, time.Time, bool) {
			return monthOf(atoi(m[2]), months[strings.ToLower(m[1])], a.Location())
		}},
		// October 13 / 13 October (this year, or last if still ahead)
		{c(monthRE + ` ` + dayRE), func(m []string, a time.Time) (time.Time, time.Time, bool) {
			return lastDay(months[strings.ToLower(m[1])], atoi(m[2]), a)
		}},
		{c(dayRE + `(?: of)? ` + monthRE), func(m []string, a time.Time) (time.Time, time.Time, bool) {
			return lastDay(months[strings.ToLower(m[2])], atoi(m[1]), a)
		}},
		// in 2023
		{c(`(?:in|during|since|of|through|throughout) ` + yearRE), func(m []string, a time.Time) (time.Time, time.Time, bool) {
			y := atoi(m[1])
			return time.Date(y, 1, 1, 0, 0, 0, 0, a.Location()), time.Date(y+1, 1, 1, 0, 0, 0, 0, a.Location()), true
		}},
		// in June / last June (the latest June not ahead)
		{c(leadRE + `(?: the)? ` + monthRE), func(m []string, a time.Time) (time.Time, time.Time, bool) {
			mo := months[strings.ToLower(m[1])]
			y := a.Year()
			if mo > a.Month() || (strings.HasPrefix(strings.ToLower(m[0]), "last") && mo == a.Month()) {
				y--
			}
			return monthOf(y, mo, a.Location())
		}},
		// in the summer / last winter (northern seasons)
		{c(`(?:in|during|over|this|last)(?: the)? ` + seasonRE), func(m []string, a time.Time) (time.Time, time.Time, bool) {
			return lastSeason(strings.ToLower(m[1]), strings.HasPrefix(strings.ToLower(m[0]), "last"), a)
		}},
		{c(`(the )?day before yesterday`), func(_ []string, a time.Time) (time.Time, time.Time, bool) {
			d := midnight(a)
			return d.Add(-2 * day), d.Add(-day), true
		}},
		{c(`(yesterday|last night)`), func(_ []string, a time.Time) (time.Time, time.Time, bool) {
			d := midnight(a)
			return d.Add(-day), d, true
		}},
		{c(`(today|tonight|this morning|this afternoon|this evening)`), func(_ []string, a time.Time) (time.Time, time.Time, bool) {
			d := midnight(a)
			return d, d.Add(day), true
		}},
		{c(`last weekend|this past weekend|the weekend`), func(_ []string, a time.Time) (time.Time, time.Time, bool) {
			d := midnight(a)
			for d.Weekday() != time.Saturday || !d.Add(2*day).Before(a.Add(time.Nanosecond)) {
				d = d.Add(-day)
			}
			return d, d.Add(2 * day), true
		}},
		{c(`(last|this|past) (week|month|year)`), func(m []string, a time.Time) (time.Time, time.Time, bool) {
			from, to := period(strings.ToLower(m[2]), a)
			if strings.EqualFold(m[1], "this") {
				return from, to, true
			}
			if strings.EqualFold(m[1], "past") { // the past week: the 7 days up to now
				return shift(midnight(a).Add(day), strings.ToLower(m[2]), -1), midnight(a).Add(day), true
			}
			return shift(from, strings.ToLower(m[2]), -1), from, true
		}},
		// two weeks ago, a few days ago
		{c(countRE + ` ` + unitRE + ` ago`), func(m []string, a time.Time) (time.Time, time.Time, bool) {
			n, ok := numbers[strings.ToLower(m[1])]
			if !ok {
				n = atoi(m[1])
			}
			unit := strings.ToLower(m[2])
			if n <= 0 || n > 100 {
				return time.Time{}, time.Time{}, false
			}
			center := shift(midnight(a), unit, -n)
			return shift(center, unit, -1), minTime(shift(center, unit, 1), midnight(a).Add(day)), true
		}},
	}
})

// recentRE marks a preference for the newest, without a span.
var recentRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(recently|lately|latest|most recent|these days|nowadays|the other day|just now)\b`)
})

// Find returns the first time expression in text, resolved against
// anchor (when the question is asked, or when the text was written), and
// whether there was one. Spans win over a preference for what is recent.
func Find(text string, anchor time.Time) (Span, bool) {
	if spans := Mentions(text, anchor); len(spans) > 0 {
		return spans[0], true
	}
	if m := recentRE().FindString(text); m != "" {
		return Span{Phrase: m, Recent: true}, true
	}
	return Span{}, false
}

// Mentions returns every span text refers to, in the order written,
// resolved against anchor: for an entry, when it was written ("yesterday
// I went..." written on 8 May 2023 is 7 May 2023). Where expressions
// overlap, the more specific wins ("July 2023" over "in July"), and a
// date that does not exist is no time at all. Preferences for what is
// recent are not spans and are left out.
func Mentions(text string, anchor time.Time) []Span {
	type found struct {
		at   int
		span Span
	}
	var out []found
	var taken [][2]int
	for _, r := range rules() {
		for _, loc := range r.re.FindAllStringSubmatchIndex(text, -1) {
			if overlapsAny(loc[0], loc[1], taken) {
				continue
			}
			taken = append(taken, [2]int{loc[0], loc[1]})
			m := submatches(text, loc)
			if from, to, ok := r.resolve(m, anchor); ok && from.Before(to) {
				out = append(out, found{loc[0], Span{Phrase: m[0], From: from, To: to}})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at < out[j].at })
	spans := make([]Span, len(out))
	for i, f := range out {
		spans[i] = f.span
	}
	return spans
}

func overlapsAny(a, b int, taken [][2]int) bool {
	for _, t := range taken {
		if a < t[1] && t[0] < b {
			return true
		}
	}
	return false
}

func submatches(text string, loc []int) []string {
	m := make([]string, len(loc)/2)
	for i := range m {
		if loc[2*i] >= 0 {
			m[i] = text[loc[2*i]:loc[2*i+1]]
		}
	}
	return m
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func midnight(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// dayOf is the day y-m-d, refusing dates that do not exist.
func dayOf(y int, m time.Month, d int, loc *time.Location) (time.Time, time.Time, bool) {
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	if m < 1 || m > 12 || t.Day() != d || t.Month() != m {
		return time.Time{}, time.Time{}, false
	}
	return t, t.Add(day), true
}

func monthOf(y int, m time.Month, loc *time.Location) (time.Time, time.Time, bool) {
	if m < 1 || m > 12 {
		return time.Time{}, time.Time{}, false
	}
	from := time.Date(y, m, 1, 0, 0, 0, 0, loc)
	return from, from.AddDate(0, 1, 0), true
}

// lastDay is the latest m/d not after anchor's day.
func lastDay(m time.Month, d int, a time.Time) (time.Time, time.Time, bool) {
	from, to, ok := dayOf(a.Year(), m, d, a.Location())
	if ok && from.After(a) {
		return dayOf(a.Year()-1, m, d, a.Location())
	}
	return from, to, ok
}

// lastSeason is the latest northern season of that name that has begun
// (the one before it, with last).
func lastSeason(name string, last bool, a time.Time) (time.Time, time.Time, bool) {
	start := map[string]time.Month{"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}[name]
	from := time.Date(a.Year(), start, 1, 0, 0, 0, 0, a.Location())
	if from.After(a) {
		from = from.AddDate(-1, 0, 0)
	}
	if last && a.Before(from.AddDate(0, 3, 0)) { // still in it: the one before
		from = from.AddDate(-1, 0, 0)
	}
	return from, from.AddDate(0, 3, 0), true
}

// period is the calendar week (from Monday), month or year holding a.
func period(unit string, a time.Time) (time.Time, time.Time) {
	d := midnight(a)
	switch unit {
	case "week":
		from := d.Add(-time.Duration((int(d.Weekday())+6)%7) * day)
		return from, from.Add(7 * day)
	case "month":
		from := time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, d.Location())
		return from, from.AddDate(0, 1, 0)
	}
	from := time.Date(d.Year(), 1, 1, 0, 0, 0, 0, d.Location())
	return from, from.AddDate(1, 0, 0)
}

// shift moves t by n units.
func shift(t time.Time, unit string, n int) time.Time {
	switch unit {
	case "day":
		return t.AddDate(0, 0, n)
	case "week":
		return t.AddDate(0, 0, 7*n)
	case "month":
		return t.AddDate(0, n, 0)
	}
	return t.AddDate(n, 0, 0)
}

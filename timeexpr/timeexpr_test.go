package timeexpr

import (
	"testing"
	"time"
)

// now is a Wednesday.
var now = time.Date(2026, 11, 18, 15, 30, 0, 0, time.UTC)

func date(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestFind(t *testing.T) {
	for _, c := range []struct {
		query, phrase, from, to string // to: the last day included
	}{
		// absolute
		{"What painting did Melanie show on October 13, 2023?", "October 13, 2023", "2023-10-13", "2023-10-13"},
		{"what did we decide on 3 May 2024 about the cache", "3 May 2024", "2024-05-03", "2024-05-03"},
		{"who did Maria have dinner with on the 3rd of May, 2023", "3rd of May, 2023", "2023-05-03", "2023-05-03"},
		{"deploys on 2025-02-28", "2025-02-28", "2025-02-28", "2025-02-28"},
		{"What did Mel paint in July 2023?", "July 2023", "2023-07-01", "2023-07-31"},
		{"which city was she in during the last week of August 2023?", "the last week of August 2023", "2023-08-25", "2023-08-31"},
		{"How many times has Melanie gone to the beach in 2023?", "in 2023", "2023-01-01", "2023-12-31"},
		// no year: the latest one not ahead of now
		{"When did Melanie go camping in June?", "in June", "2026-06-01", "2026-06-30"},
		{"what broke in December", "in December", "2025-12-01", "2025-12-31"},
		{"what shipped last November", "last November", "2025-11-01", "2025-11-30"},
		{"the outage on March 3", "March 3", "2026-03-03", "2026-03-03"},
		{"When did Caroline go to a pride parade during the summer?", "during the summer", "2026-06-01", "2026-08-31"},
		{"what did we do last winter", "last winter", "2025-12-01", "2026-02-28"},
		// relative
		{"what did we decide yesterday about the cache", "yesterday", "2026-11-17", "2026-11-17"},
		{"the deploy the day before yesterday", "the day before yesterday", "2026-11-16", "2026-11-16"},
		{"what did we decide last week about the cache", "last week", "2026-11-09", "2026-11-15"},
		{"the bug we fixed this week", "this week", "2026-11-16", "2026-11-22"},
		{"what did John do last weekend", "last weekend", "2026-11-14", "2026-11-15"},
		{"changes from last month", "last month", "2026-10-01", "2026-10-31"},
		{"Where did John explore on a road trip last year?", "last year", "2025-01-01", "2025-12-31"},
		{"what broke two weeks ago", "two weeks ago", "2026-10-28", "2026-11-10"},
		{"the fix from 3 days ago", "3 days ago", "2026-11-14", "2026-11-15"},
		{"a couple of months ago we moved to pnpm", "a couple of months ago", "2026-08-18", "2026-10-17"},
	} {
		s, ok := Find(c.query, now)
		if !ok || s.Recent || s.Phrase != c.phrase || !s.From.Equal(date(c.from)) || !s.To.Equal(date(c.to).Add(day)) {
			t.Errorf("Find(%q) = %v (%v), want %q → %s – %s", c.query, s, ok, c.phrase, c.from, c.to)
		}
	}
}

// Recency without a span, and queries with no time at all (numbers,
// versions, the modal "may", month-like words) find nothing.
func TestFindRecentAndNone(t *testing.T) {
	for _, q := range []string{"What did Melanie paint recently?", "what changed lately in billing", "the latest decision on retries"} {
		if s, ok := Find(q, now); !ok || !s.Recent {
			t.Errorf("Find(%q) = %v, %v; want a preference for recent", q, s, ok)
		}
	}
	for _, q := range []string{
		"why did we choose postgres for billing",
		"we may drop redis", "March the migrations forward", "retry 3 times with 2023 ms backoff",
		"issue 2023 in the tracker", "version 1.20.3", "port 8080 on day one",
		"2023-02-30 is not a date", "", "the 45th of May 2023",
	} {
		if s, ok := Find(q, now); ok {
			t.Errorf("Find(%q) = %v; want no time", q, s)
		}
	}
}

// An entry's relative words are resolved against when it was written.
func TestMentions(t *testing.T) {
	written := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	got := Mentions("Caroline: Yesterday I went to the LGBTQ support group, and last weekend we painted.", written)
	if len(got) != 2 || !got[0].From.Equal(date("2023-05-07")) || !got[1].From.Equal(date("2023-05-06")) || !got[1].To.Equal(date("2023-05-08")) {
		t.Fatalf("Mentions = %v", got)
	}
	if got := Mentions("we chose postgres", written); len(got) != 0 {
		t.Errorf("Mentions of plain text = %v", got)
	}
	span := Span{From: date("2023-05-07"), To: date("2023-05-08")}
	if !span.Contains(date("2023-05-07").Add(time.Hour)) || span.Contains(date("2023-05-08")) || !span.Overlaps(got0(t, written)) {
		t.Error("Contains/Overlaps")
	}
	if s := (Span{Phrase: "in July 2023", From: date("2023-07-01"), To: date("2023-08-01")}).String(); s != `"in July 2023" → 2023-07-01 – 2023-07-31` {
		t.Errorf("String = %s", s)
	}
}

func got0(t *testing.T, written time.Time) Span {
	t.Helper()
	m := Mentions("yesterday", written)
	if len(m) != 1 {
		t.Fatalf("Mentions(yesterday) = %v", m)
	}
	return m[0]
}

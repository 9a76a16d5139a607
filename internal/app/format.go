package app

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/internal/excerpt"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Formatting shared by everything that shows memory to people and agents
// (the CLI, the MCP server and the context injected by the agent hooks).

// Age renders how long before now t was, briefly ("3h ago", "12d ago").
func Age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 0:
		return "in the future"
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	case d < 60*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	case d < 730*24*time.Hour:
		return fmt.Sprintf("%dmo ago", int(d.Hours()/24/30))
	}
	return fmt.Sprintf("%dy ago", int(d.Hours()/24/365))
}

// Plural is "1 commit" or "n commits" ("1 entry", "n entries";
// excerpt.Plural).
func Plural(n int, noun string) string { return excerpt.Plural(n, noun) }

// AuthorName is the name part of "Name <email>".
func AuthorName(a string) string {
	if i := strings.Index(a, " <"); i > 0 {
		return a[:i]
	}
	return a
}

// ShortID is the 8-digit form of an id, as listings show it.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// FirstLine is the first line of s, trimmed, cut to n runes
// (excerpt.FirstLine).
func FirstLine(s string, n int) string { return excerpt.FirstLine(s, n) }

// Origin says where a memory comes from as seen by identity me: "you",
// "teammate", "git history" for indexed commits, or "subscription NAME"
// for memory followed from another repository.
func Origin(r Entry, me string) string {
	switch {
	case r.Source == cache.HistorySource:
		return "git history"
	case SubscriptionOf(r.Source) != "":
		return "subscription " + SubscriptionOf(r.Source)
	case r.Author == me:
		return "you"
	}
	return "teammate"
}

// itemHead is the provenance tag of an injected item:
// [id · type · age · author(, origin)( · pinned)( · on BRANCH, for commits)],
// then its standing against the code (CodeMarks).
func itemHead(r Entry, me string, now time.Time) string {
	who := "you"
	if o := Origin(r, me); o != "you" {
		who = AuthorName(r.Author) + ", " + o
	}
	extra := ""
	if r.Pinned {
		extra = " · pinned"
	}
	if r.Type == memory.TypeGitCommit && r.Branch != "" {
		extra += " · on " + r.Branch
	}
	return withMarks(fmt.Sprintf("[%s · %s · %s · %s%s]", ShortID(r.ID), r.Type, Age(now, r.Created), who, extra), r)
}

// DescribeOp says what an operation changed, in a few words ("" for one
// that carries nothing beyond its kind, such as a pin).
func DescribeOp(op memory.Op) string {
	var parts []string
	if op.Content != nil {
		parts = append(parts, "new content")
	}
	if op.Type != "" {
		parts = append(parts, "type "+string(op.Type))
	}
	if len(op.AddTags) > 0 {
		parts = append(parts, "+tags "+strings.Join(op.AddTags, ","))
	}
	if len(op.RemoveTags) > 0 {
		parts = append(parts, "-tags "+strings.Join(op.RemoveTags, ","))
	}
	if op.Tier != "" {
		parts = append(parts, string(op.Tier))
	}
	if op.Kind == memory.OpRelevant {
		parts = append(parts, fmt.Sprintf("score %.2f", op.Score))
	}
	if op.Reason != "" {
		parts = append(parts, "reason: "+op.Reason)
	}
	if op.Objective != "" {
		parts = append(parts, "objective: "+op.Objective)
	}
	return strings.Join(parts, ", ")
}

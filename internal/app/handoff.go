package app

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/memory"
)

const (
	sessionStartKey = "session-start:" // when a session started
	sessionHeadKey  = "session-head:"  // HEAD when it started
)

// StartSession records the agent session as this worktree's (servers that
// follow the agent save into it) and when it began (for its handoff's
// activity summary), and returns its context (see sessionContext). What
// the context shows counts as a use of each entry, once per session.
func (s *Agent) StartSession(ctx context.Context, sessionID string, budget int) (string, error) {
	s.capture.RecordSession(sessionID)
	s.capture.Prune()
	if sessionID != "" {
		if c, err := s.openCache(); err == nil {
			if old, _ := c.Meta(ctx, sessionStartKey+sessionID); old == "" {
				c.SetMeta(ctx, sessionStartKey+sessionID, s.now().UTC().Format(time.RFC3339Nano))
				if head, err := s.repo.Head(); err == nil {
					c.SetMeta(ctx, sessionHeadKey+sessionID, head.String())
				}
			}
		}
	}
	md, shown, err := s.sessionContext(ctx, budget)
	if err != nil {
		return "", err
	}
	if _, err := s.shown(ctx, sessionID, shown); err != nil {
		s.warnf("could not record what the session start showed: %v", err)
	}
	return md, nil
}

// learningRE finds entries that read like something learned: a decision, a
// solution or a discovery.
var learningRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(decided|decision|we chose|chose to|the fix (was|is)|fixed by|solved|solution|root cause|turns out|turned out|discovered|found that|learned|lesson|gotcha|workaround)\b`)
})

// SessionHandoff writes the handoff of an agent session when it stops or
// is about to compact its context: what the session did (memory saved,
// commits made, files left changed) and what it learned (its insights and
// entries that read like decisions, solutions or discoveries). An agent
// stops after every turn, so a session keeps one handoff and updates it
// when the summary changes. It returns the handoff's id and whether it
// wrote anything.
func (s *Agent) SessionHandoff(ctx context.Context, sessionID string) (string, bool, error) {
	if sessionID == "" {
		return "", false, Invalidf("no session id (the agent passes one; else set GIT_SYNAPTIC_SESSION)")
	}
	mine, err := s.recall().List(ctx, Filter{Session: sessionID, IncludeArchived: true})
	if err != nil {
		return "", false, err
	}
	existing, saved, learnings, twins := sortSessionMemory(mine)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", handoffTitle, sessionID)
	if len(saved) > 0 {
		counts := map[memory.Type]int{}
		for _, r := range saved {
			counts[r.Type]++
		}
		var parts []string
		for t, n := range counts {
			parts = append(parts, fmt.Sprintf("%d %s", n, t))
		}
		sort.Strings(parts)
		fmt.Fprintf(&b, "\nMemory saved: %s.\n", strings.Join(parts, ", "))
	}
	commits := s.sessionCommits(ctx, sessionID)
	if len(saved) == 0 && len(commits) == 0 {
		// Files left changed alone are no handoff: a teammate learns
		// nothing from "Left uncommitted: .mcp.json", and the working tree
		// tells this clone's next session the same.
		return "", false, nil
	}
	if len(commits) > 0 {
		fmt.Fprintf(&b, "\nCommits:\n")
		for _, c := range commits {
			fmt.Fprintf(&b, "- %s %s\n", c.SHA[:8], FirstLine(c.Message, 160))
		}
	}
	if files, _ := s.repo.ChangedFiles(ctx, false); len(files) > 0 {
		if len(files) > 20 {
			files = append(files[:20], fmt.Sprintf("and %d more", len(files)-20))
		}
		fmt.Fprintf(&b, "\nLeft uncommitted: %s\n", strings.Join(files, ", "))
	}
	if len(learnings) > 0 {
		fmt.Fprintf(&b, "\nLearnings:\n")
		for _, r := range learnings {
			fmt.Fprintf(&b, "- [%s] %s\n", ShortID(r.ID), FirstLine(r.Content, 160))
		}
	}
	for _, id := range twins {
		if _, err := s.memory().SetArchived(ctx, id, true); err != nil {
			s.warnf("could not archive the duplicate handoff %s: %v", ShortID(id), err)
		}
	}
	content := strings.TrimSpace(b.String())
	if existing != nil {
		if existing.Content == content {
			return existing.ID, false, nil
		}
		_, err := s.memory().Edit(ctx, existing.ID, EditRequest{Content: &content})
		return existing.ID, err == nil, err
	}
	e, err := s.memory().Save(ctx, SaveRequest{Content: content, Type: memory.TypeHandoff, SessionID: sessionID, Tags: []string{"session"}})
	return e.ID, err == nil, err
}

// sortSessionMemory sorts a session's entries for its handoff: the
// handoff it wrote already, the other handoffs two stop hooks at once both
// wrote (twins), what it saved, and which of that are learnings. Private
// and archived entries are left out.
func sortSessionMemory(mine []Entry) (existing *Entry, saved, learnings []Entry, twins []string) {
	for i := range mine {
		r := mine[i]
		switch {
		case r.Private:
			// The handoff is shared memory: private entries of the
			// session are neither counted nor quoted.
		case r.Type == memory.TypeHandoff && strings.HasPrefix(r.Content, handoffTitle):
			if existing == nil {
				existing = &mine[i]
			} else if !r.Archived {
				twins = append(twins, r.ID)
			}
		case r.Archived:
		default:
			saved = append(saved, r)
			if r.Type == memory.TypeInsight || r.Type == memory.TypeDecision || learningRE().MatchString(r.Content) {
				learnings = append(learnings, r)
			}
		}
	}
	return existing, saved, learnings, twins
}

const handoffTitle = "Session handoff:"

// sessionCommits are the commits made since the session started (as
// recorded by StartSession).
func (s *core) sessionCommits(ctx context.Context, sessionID string) []gitstore.Commit {
	c, err := s.openCache()
	if err != nil || s.repo.Unborn() {
		return nil
	}
	v, _ := c.Meta(ctx, sessionStartKey+sessionID)
	since, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil
	}
	// The commits since the HEAD the session started on: dates have
	// seconds only, and a commit of the second before the session started
	// is not the session's.
	opt := gitstore.LogOptions{Revs: []string{"HEAD"}, Since: since, Max: 50}
	if head, _ := c.Meta(ctx, sessionHeadKey+sessionID); head != "" {
		opt = gitstore.LogOptions{Revs: []string{"HEAD", "^" + head}, Max: 50}
	}
	var out []gitstore.Commit
	_, _ = s.repo.History(ctx, opt, func(c gitstore.Commit) error {
		out = append(out, c)
		return nil
	})
	return out
}

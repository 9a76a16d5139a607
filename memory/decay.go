package memory

import (
	"fmt"
	"time"
)

// Day is 24 hours, the unit of the decay rules.
const Day = 24 * time.Hour

// Usage is what maintenance knows of an entry: its authored state and the
// local access statistics.
type Usage struct {
	Type         Type
	Created      time.Time
	Updated      time.Time // last authored change
	Pinned       bool
	TierExplicit bool
	Tier         Tier      // the authored (or default) tier
	Accesses     int       // times returned by search or shown, in this clone
	LastAccess   time.Time // zero if never
}

// Verdict is the derived tier and archive state of an entry.
type Verdict struct {
	Tier     Tier
	Archived bool
	Reason   string
}

// archiveAfter is how long an ephemeral entry may sit idle before
// maintenance archives it: 3 days if never used, 7 if used once or twice,
// 14 if used more.
func archiveAfter(accesses int) time.Duration {
	switch {
	case accesses == 0:
		return 3 * Day
	case accesses <= 2:
		return 7 * Day
	}
	return 14 * Day
}

// demoteAfter is how long a working entry may sit idle before it drops to
// ephemeral: 15, 30 or 60 days by the same access bands.
func demoteAfter(accesses int) time.Duration {
	switch {
	case accesses == 0:
		return 15 * Day
	case accesses <= 2:
		return 30 * Day
	}
	return 60 * Day
}

// Decay computes an entry's tier and archive state at now. Pinned entries
// keep what people set and never expire. Otherwise:
//   - the tier starts from the type (an indexed commit is working for its
//     first 7 days, ephemeral after), or from the tier a person set, which
//     is neither promoted nor demoted;
//   - ephemeral entries, by type (handoffs, progress, captures) or set so,
//     idle for 3/7/14 days (0, 1-2, 3+ uses) are archived, however often
//     they were shown: use does not promote them;
//   - decisions and insights older than 7 days are promoted to longterm;
//   - indexed commits used 3 or more times stay working;
//   - working entries idle for 15/30/60 days drop to ephemeral. Demoted
//     working entries are not archived (demotion only lowers their
//     weight), nor are indexed commits (the history is theirs).
//
// Idle time counts from the last authored change or access, whichever is
// later.
func Decay(u Usage, now time.Time) Verdict {
	if u.Pinned {
		return Verdict{Tier: u.Tier}
	}
	base := DefaultTier(u.Type)
	if u.Type == TypeGitCommit && now.Sub(u.Created) >= 7*Day {
		base = TierEphemeral
	}
	if u.TierExplicit {
		base = u.Tier
	}
	last := u.Updated
	if u.Created.After(last) {
		last = u.Created
	}
	if u.LastAccess.After(last) {
		last = u.LastAccess
	}
	idle := now.Sub(last)
	expires := base == TierEphemeral && u.Type != TypeGitCommit && (u.TierExplicit || DefaultTier(u.Type) == TierEphemeral)
	v := Verdict{Tier: base}
	switch {
	case expires && idle > archiveAfter(u.Accesses):
		v = Verdict{Tier: TierEphemeral, Archived: true, Reason: fmt.Sprintf("ephemeral, idle %d days with %d uses", int(idle/Day), u.Accesses)}
	case expires || u.TierExplicit:
	case (u.Type == TypeDecision || u.Type == TypeInsight) && now.Sub(u.Created) > 7*Day:
		v = Verdict{Tier: TierLongterm, Reason: "decision or insight older than 7 days"}
	case base == TierEphemeral && u.Accesses >= 3:
		v = Verdict{Tier: TierWorking, Reason: fmt.Sprintf("ephemeral but used %d times", u.Accesses)}
	case base == TierWorking && idle > demoteAfter(u.Accesses):
		v = Verdict{Tier: TierEphemeral, Reason: fmt.Sprintf("working, idle %d days with %d uses", int(idle/Day), u.Accesses)}
	}
	return v
}

// DecayNext is the earliest instant after now at which Decay may judge u
// otherwise, u unchanged (no use, no authored change); zero when it never
// will (a pinned entry). Decay's verdict changes only where a threshold
// of age or idle time is crossed, so an entry judged at now need not be
// judged again before then: maintenance passes judge only the entries
// whose instant has come.
func DecayNext(u Usage, now time.Time) time.Time {
	if u.Pinned {
		return time.Time{}
	}
	last := u.Updated
	if u.Created.After(last) {
		last = u.Created
	}
	if u.LastAccess.After(last) {
		last = u.LastAccess
	}
	// Decay's comparisons: age >= 7 days for a commit, > 7 days for a
	// decision, idle > the archive and demotion times
	var next time.Time
	for _, t := range []time.Time{
		u.Created.Add(7 * Day), u.Created.Add(7*Day + 1),
		last.Add(archiveAfter(u.Accesses) + 1), last.Add(demoteAfter(u.Accesses) + 1),
	} {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}

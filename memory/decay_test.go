package memory

import (
	"math/rand"
	"testing"
	"time"
)

func TestDecayRules(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d float64) time.Time { return now.Add(-time.Duration(d * float64(Day))) }
	cases := []struct {
		name string
		u    Usage
		want Verdict
	}{
		{"fresh handoff stays", Usage{Type: TypeHandoff, Created: ago(1)}, Verdict{Tier: TierEphemeral}},
		{"unused handoff archived after 3 days", Usage{Type: TypeHandoff, Created: ago(3.5)}, Verdict{Tier: TierEphemeral, Archived: true}},
		{"handoff used twice survives 5 days", Usage{Type: TypeHandoff, Created: ago(10), Accesses: 2, LastAccess: ago(5)}, Verdict{Tier: TierEphemeral}},
		{"handoff used twice archived after 7 idle days", Usage{Type: TypeHandoff, Created: ago(10), Accesses: 2, LastAccess: ago(8)}, Verdict{Tier: TierEphemeral, Archived: true}},
		{"progress used 3 times is not promoted", Usage{Type: TypeProgress, Created: ago(30), Accesses: 3, LastAccess: ago(2)}, Verdict{Tier: TierEphemeral}},
		{"progress used 3 times expires after 14 idle days", Usage{Type: TypeProgress, Created: ago(30), Accesses: 3, LastAccess: ago(20)}, Verdict{Tier: TierEphemeral, Archived: true}},
		{"a 200-day-old handoff shown 6 times expires", Usage{Type: TypeHandoff, Created: ago(200), Accesses: 6, LastAccess: ago(150)}, Verdict{Tier: TierEphemeral, Archived: true}},
		{"explicit ephemeral expires", Usage{Type: TypeDecision, Created: ago(10), TierExplicit: true, Tier: TierEphemeral}, Verdict{Tier: TierEphemeral, Archived: true}},
		{"explicit ephemeral, used lately, kept", Usage{Type: TypeDecision, Created: ago(10), TierExplicit: true, Tier: TierEphemeral, Accesses: 1, LastAccess: ago(1)}, Verdict{Tier: TierEphemeral}},
		{"explicit longterm never demoted", Usage{Type: TypeIssue, Created: ago(300), TierExplicit: true, Tier: TierLongterm}, Verdict{Tier: TierLongterm}},
		{"old commit used 3 times stays working", Usage{Type: TypeGitCommit, Created: ago(100), Accesses: 3, LastAccess: ago(1)}, Verdict{Tier: TierWorking}},
		{"idle issue demoted after 15 days", Usage{Type: TypeIssue, Created: ago(16)}, Verdict{Tier: TierEphemeral}},
		{"used issue kept 30 days", Usage{Type: TypeIssue, Created: ago(40), Accesses: 1, LastAccess: ago(25)}, Verdict{Tier: TierWorking}},
		{"edited issue is not idle", Usage{Type: TypeIssue, Created: ago(100), Updated: ago(2)}, Verdict{Tier: TierWorking}},
		{"old decision promoted", Usage{Type: TypeDecision, Created: ago(8)}, Verdict{Tier: TierLongterm}},
		{"young decision working", Usage{Type: TypeDecision, Created: ago(2)}, Verdict{Tier: TierWorking}},
		{"pinned handoff immune", Usage{Type: TypeHandoff, Created: ago(300), Pinned: true, Tier: TierEphemeral}, Verdict{Tier: TierEphemeral}},
		{"explicit tier kept", Usage{Type: TypeIssue, Created: ago(300), TierExplicit: true, Tier: TierWorking}, Verdict{Tier: TierWorking}},
		{"new commit working", Usage{Type: TypeGitCommit, Created: ago(2)}, Verdict{Tier: TierWorking}},
		{"old commit ephemeral, never archived", Usage{Type: TypeGitCommit, Created: ago(100)}, Verdict{Tier: TierEphemeral}},
		{"reference never decays", Usage{Type: TypeReference, Created: ago(1000)}, Verdict{Tier: TierLongterm}},
	}
	for _, c := range cases {
		got := Decay(c.u, now)
		if got.Tier != c.want.Tier || got.Archived != c.want.Archived {
			t.Errorf("%s: got %+v, want tier %s archived %v", c.name, got, c.want.Tier, c.want.Archived)
		}
		if (got.Tier != DefaultTier(c.u.Type) || got.Archived) && got.Reason == "" && !c.u.Pinned && !(c.u.TierExplicit && !got.Archived) && c.u.Type != TypeGitCommit {
			t.Errorf("%s: a change without a reason", c.name)
		}
	}
}

// TestDecayNextHoldsTheVerdict: between now and DecayNext, Decay judges an
// entry as it does at now, for every kind of entry and usage; at
// DecayNext the verdict may change, and where it never will DecayNext is
// zero or past every instant tried.
func TestDecayNextHoldsTheVerdict(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewSource(1))
	types := []Type{TypeDecision, TypeInsight, TypeIssue, TypeProgress, TypeHandoff, TypeReference, TypeRule, TypeGitCommit}
	tiers := []Tier{TierEphemeral, TierWorking, TierLongterm}
	changed := 0
	for i := 0; i < 3000; i++ {
		u := Usage{Type: types[rng.Intn(len(types))], Created: now.Add(-time.Duration(rng.Int63n(int64(40 * Day)))),
			Pinned: rng.Intn(10) == 0, TierExplicit: rng.Intn(4) == 0, Tier: tiers[rng.Intn(3)], Accesses: rng.Intn(5)}
		u.Updated = u.Created.Add(time.Duration(rng.Int63n(int64(3 * Day))))
		if u.Accesses > 0 {
			u.LastAccess = u.Created.Add(time.Duration(rng.Int63n(int64(20 * Day))))
		}
		at := now.Add(-time.Duration(rng.Int63n(int64(10 * Day))))
		v, next := Decay(u, at), DecayNext(u, at)
		if !next.IsZero() && !next.After(at) {
			t.Fatalf("%+v at %v: next %v is not after it", u, at, next)
		}
		horizon := at.Add(90 * Day)
		end := next
		if end.IsZero() || end.After(horizon) {
			end = horizon
		}
		for _, x := range []time.Time{at, at.Add(time.Duration(rng.Int63n(int64(end.Sub(at))))), end.Add(-1)} {
			if w := Decay(u, x); w.Tier != v.Tier || w.Archived != v.Archived {
				t.Fatalf("%+v: judged %v/%v at %v, %v/%v at %v, before next %v", u, v.Tier, v.Archived, at, w.Tier, w.Archived, x, next)
			}
		}
		if !next.IsZero() {
			if w := Decay(u, next); w.Tier != v.Tier || w.Archived != v.Archived {
				changed++
			}
		}
	}
	if changed == 0 {
		t.Fatal("the verdict never changed at DecayNext")
	}
	// a handoff nobody used is archived just after 3 idle days
	h := Usage{Type: TypeHandoff, Created: now, Updated: now, Tier: TierEphemeral}
	if next := DecayNext(h, now); !next.Equal(now.Add(3*Day+1)) || !Decay(h, next).Archived || Decay(h, next.Add(-1)).Archived {
		t.Fatalf("handoff: next %v", next)
	}
	if next := DecayNext(Usage{Type: TypeHandoff, Created: now, Pinned: true}, now); !next.IsZero() {
		t.Fatalf("pinned: next %v", next)
	}
}

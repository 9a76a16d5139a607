package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/memory"
)

// ErrNoRemote is returned when sync has no remote to talk to.
var ErrNoRemote = errors.New("no remote")

// fetchSpecs are the refspecs that carry memory from remote r. The notes
// spec is a pattern so that fetching from a remote without notes is not an
// error.
func fetchSpecs(r string) []string {
	return []string{
		"+" + sharedPrefix + "*:" + trackingRef(r, sharedPrefix) + "*",
		"+" + gitstore.NotesRef + "*:" + trackingRef(r, gitstore.NotesRef) + "*",
	}
}

// AutoPushKey turns off pushing memory from the pre-push hook when false.
const AutoPushKey = "synaptic.autoPush"

// PushDue reports whether the pre-push hook has memory to push to
// remote alongside the user's git push: unless git config
// synaptic.autoPush is false, when a memory ref moved since the remote
// was last seen, or the remote moved to a new address, whose tracking
// refs no longer tell. It costs nothing on the network: the hook runs a
// Sync only when it says so (which fetches, merges what a teammate pushed
// first, and pushes), and never touches the user's branches.
func (s *Sharing) PushDue(ctx context.Context, remote string) (bool, error) {
	if on, set, err := s.repo.ConfigBool(ctx, AutoPushKey); err != nil || (set && !on) {
		return false, err
	}
	remotes, err := s.repo.Remotes(ctx)
	if err != nil || !slices.Contains(remotes, remote) {
		return false, err // a push to a URL: memory goes with sync
	}
	push, _, err := s.unpushed(remote) // sync reports the bad refs
	if err != nil {
		return false, err
	}
	return len(push) > 0 || !s.sameAddress(ctx, remote), nil
}

// PrePushWaitKey is the git config key for how long the pre-push hook
// holds the user's git push for memory (PrePushWait).
const PrePushWaitKey = "synaptic.prePushWait"

// DefaultPrePushWait is how long the pre-push hook holds the user's git
// push for memory unless git config synaptic.prePushWait says otherwise.
// A push of new memory takes a second or two; the first push of a large
// memory (two minutes at a million entries, most of it git packing and
// checking) goes on in the background instead.
const DefaultPrePushWait = 10 * time.Second

// PrePushWait is how long the pre-push hook waits for memory's push
// before it lets it go on in the background: git config
// synaptic.prePushWait (a duration, or seconds; 0 never waits), else
// DefaultPrePushWait.
func (s *Sharing) PrePushWait(ctx context.Context) time.Duration {
	if d, ok := s.repo.ConfigDuration(ctx, PrePushWaitKey); ok {
		return d
	}
	return DefaultPrePushWait
}

// SyncReport says what Sync did.
type SyncReport struct {
	Remote  string            `json:"remote"`
	Merged  map[string]string `json:"merged"` // local ref → merge result
	Pushed  []string          `json:"pushed"`
	Before  int               `json:"entries_before"`
	After   int               `json:"entries_after"`
	Retries int               `json:"retries"`
}

// DefaultRemote picks origin, else the only remote.
func (s *Sharing) DefaultRemote(ctx context.Context) (string, error) {
	remotes, err := s.repo.Remotes(ctx)
	if err != nil {
		return "", err
	}
	for _, r := range remotes {
		if r == "origin" {
			return r, nil
		}
	}
	switch len(remotes) {
	case 0:
		return "", fmt.Errorf("%w: this repository has no remote to sync memory with (git remote add origin URL)", ErrNoRemote)
	case 1:
		return remotes[0], nil
	}
	return "", fmt.Errorf("%w: several remotes (%s) and none is origin; name one: git synaptic sync REMOTE", ErrNoRemote, strings.Join(remotes, ", "))
}

// Sync fetches memory from remote, merges it into local memory (union, no
// conflicts) and pushes the result. If the remote moves in between, it
// fetches and merges again.
func (s *Sharing) Sync(ctx context.Context, remote string) (SyncReport, error) {
	remote, err := s.syncRemote(ctx, remote)
	if err != nil {
		return SyncReport{}, err
	}
	rep := SyncReport{Remote: remote, Merged: map[string]string{}}
	// git fetch refuses to run while any ref points at a missing object.
	if damage, err := s.damaged(ctx); err == nil && len(damage) > 0 {
		fixed, err := s.memory().repair(ctx, damage)
		for _, r := range fixed {
			s.warnf("repaired %s before syncing: %s (%d objects were missing, %d documents recovered; see 'git synaptic repair')", r.Ref, r.Action, r.Missing, r.Recovered)
		}
		if err != nil {
			return rep, err
		}
	}
	if n, err := s.count(ctx); err == nil {
		rep.Before = n
	}
	for attempt := 0; ; attempt++ {
		if err := s.fetchAndMerge(ctx, remote, 0, rep.Merged); err != nil {
			return rep, err
		}
		push, err := s.pushable(ctx, remote)
		if err != nil {
			return rep, err
		}
		if len(push) == 0 {
			break
		}
		leases := s.leases(ctx, remote, push)
		err = s.repo.Push(s.transfers(ctx), remote, append(leases, push...)...)
		if errors.Is(err, gitstore.ErrPushRejected) && attempt < 5 {
			rep.Retries++
			continue
		}
		if err != nil {
			return rep, err
		}
		rep.Pushed = push
		if err := s.recordPushed(ctx, remote, push, len(leases) > 0); err != nil {
			return rep, err
		}
		break
	}
	s.conn.refsMoved()
	n, err := s.count(ctx)
	if err != nil {
		return rep, err
	}
	rep.After = n
	return rep, nil
}

// syncRemote is the remote a sync talks to: remote, or the default one;
// an error when there is no such remote.
func (s *core) syncRemote(ctx context.Context, remote string) (string, error) {
	var err error
	if remote == "" {
		if remote, err = s.sharing().DefaultRemote(ctx); err != nil {
			return "", err
		}
	}
	if strings.HasPrefix(remote, "-") {
		return "", Invalidf("%q is not a remote name", remote)
	}
	remotes, err := s.repo.Remotes(ctx)
	if err != nil {
		return "", err
	}
	if !slices.Contains(remotes, remote) {
		return "", fmt.Errorf("%w: no remote named %q (git remote -v lists them)", ErrNoRemote, remote)
	}
	return remote, nil
}

// fetchAndMerge fetches remote's memory and merges each ref into its
// local ref, noting in merged what happened to each; the fetch is stopped
// after silence without a word from git (0: the network timeout). Garbage
// on the remote is skipped with a warning: it must not stop the rest of
// memory syncing.
func (s *core) fetchAndMerge(ctx context.Context, remote string, silence time.Duration, merged map[string]string) error {
	addr := s.remoteAddress(ctx, remote)
	if err := s.repo.Fetch(s.transfers(ctx), remote, silence, fetchSpecs(remote)...); err != nil {
		return err
	}
	if c, err := s.openCache(); err == nil {
		c.SetMeta(ctx, remoteAddressKey+remote, addr)
	}
	tracking, err := s.log.Refs(trackingRef(remote, sharedPrefix))
	if err != nil {
		return err
	}
	notesTracking := trackingRef(remote, gitstore.NotesRef)
	if h, err := s.log.Tip(notesTracking); err == nil && !h.IsZero() {
		tracking[notesTracking] = h
	}
	s.fetchedComplete(tracking)
	for ref, h := range tracking {
		local, _ := trackedLocal(ref)
		res, err := s.mergeRef(ctx, local, h)
		if err != nil {
			s.warnf("skipped %s: %v", ref, err)
			merged[local] = "skipped: " + err.Error()
			continue
		}
		merged[local] = string(res)
	}
	return nil
}

// transfers is ctx, under which git's progress shows when someone
// watches this command (Options.Transfers): a fetch or push of a large
// memory takes minutes.
func (s *core) transfers(ctx context.Context) context.Context {
	if s.transfersOut == nil {
		return ctx
	}
	return gitstore.ShowingTransfers(ctx, s.transfersOut)
}

// remoteAddressKey names the cache's record of the address at which a
// remote's tracking refs were last fetched.
const remoteAddressKey = "remote-address:"

// remoteAddress is where remote fetches from and pushes to, as configured.
func (s *core) remoteAddress(ctx context.Context, remote string) string {
	push, _ := s.repo.ConfigGetAll(ctx, "remote."+remote+".pushurl")
	return strings.Join(append([]string{s.repo.RemoteURL(remote)}, push...), "\n")
}

// sameAddress reports whether remote's tracking refs were fetched from
// its address as now configured: after git remote set-url they say
// nothing about what the new address holds. Unknown (a rebuilt cache)
// counts as moved: a sync costs one fetch.
func (s *core) sameAddress(ctx context.Context, remote string) bool {
	last, known := s.lastAddress(ctx, remote)
	return known && last == s.remoteAddress(ctx, remote)
}

// lastAddress is the address remote's tracking refs were last fetched
// from, when the cache knows it.
func (s *core) lastAddress(ctx context.Context, remote string) (string, bool) {
	c, err := s.openCache()
	if err != nil {
		return "", false
	}
	v, err := c.Meta(ctx, remoteAddressKey+remote)
	return v, err == nil && v != ""
}

// recordPushed moves the remote-tracking refs to what the remote now
// holds, so that status and the next command see them in step. After a
// push that replaced history (a purge, rewrote), the reflogs that still
// name the old tips are expired.
func (s *core) recordPushed(ctx context.Context, remote string, push []string, rewrote bool) error {
	for _, spec := range push {
		local, _, _ := strings.Cut(spec, ":")
		h, err := s.log.Tip(local)
		if err != nil || h.IsZero() {
			continue
		}
		tr := trackingRef(remote, local)
		if err := s.repo.SetRef(ctx, tr, h); err == nil && s.conn.opened() != nil {
			s.conn.opened().SetMeta(ctx, mergedKey+tr, h.String())
		}
		if rewrote {
			if err := s.expireReflogs(ctx, local); err != nil {
				return err
			}
		}
	}
	return nil
}

// leases returns --force-with-lease options for the refs a purge rewrote:
// where the local ref no longer contains what the remote had, the push
// replaces the remote's history, and only if it is still what we fetched.
func (s *core) leases(ctx context.Context, remote string, specs []string) []string {
	var out []string
	for _, spec := range specs {
		local, dst, _ := strings.Cut(spec, ":")
		if dst == "" {
			dst = local
		}
		theirs, err := s.log.Tip(trackingRef(remote, local))
		if err != nil || theirs.IsZero() {
			continue
		}
		ours, err := s.log.Tip(local)
		if err != nil || ours.IsZero() {
			continue
		}
		if ok, err := s.repo.IsAncestor(ctx, theirs, ours); err == nil && !ok {
			out = append(out, "--force-with-lease="+dst+":"+theirs.String())
		}
	}
	return out
}

// pushable lists push refspecs for local memory refs the remote lacks.
// Only refs that point at a readable commit are pushed: anything else
// under refs/synaptic/ (a blob, a missing object) is reported and left
// out, so it neither spreads nor blocks the push of the rest.
func (s *core) pushable(ctx context.Context, remote string) ([]string, error) {
	specs, bad, err := s.unpushed(remote)
	for ref, err := range bad {
		s.warnf("not pushing %s: %v", ref, err)
	}
	return specs, err
}

// memoryDirs are the names a memory tree may hold at its root.
var memoryDirs = map[string]bool{memory.EntriesDir: true, memory.OpsDir: true, memory.PurgedDir: true}

// looksLikeMemory refuses a commit under refs/synaptic/ whose tree is not
// memory (a branch pushed there by mistake): sync pushes only memory.
func looksLikeMemory(repo *gitstore.Repo, ref string, h gitstore.Hash) error {
	if ref == gitstore.NotesRef {
		return nil
	}
	names, err := repo.TopNames(h)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("its tree is empty, not memory; remove it with git update-ref -d %s", ref)
	}
	for _, n := range names {
		if !memoryDirs[n] {
			return fmt.Errorf("its tree is not memory (it holds %q); remove it with git update-ref -d %s", n, ref)
		}
	}
	return nil
}

// unpushed lists push refspecs for the local memory refs whose tips differ
// from what remote was last seen to hold, and apart the refs that do not
// point at a readable commit, with the reason.
func (s *core) unpushed(remote string) (specs []string, bad map[string]error, err error) {
	local, err := s.log.Refs(sharedPrefix, gitstore.NotesRef)
	if err != nil {
		return nil, nil, err
	}
	bad = map[string]error{}
	for ref, h := range local {
		tr := trackingRef(remote, ref)
		if t, _ := s.log.Tip(tr); t == h {
			continue
		}
		if _, err := s.repo.CommitTree(h); err != nil {
			bad[ref] = err
			continue
		}
		if err := looksLikeMemory(s.repo, ref, h); err != nil {
			bad[ref] = err
			continue
		}
		specs = append(specs, ref+":"+ref)
	}
	sort.Strings(specs)
	return specs, bad, nil
}

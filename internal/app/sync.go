package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/cochange"
	"github.com/git-synaptic/git-synaptic/embed"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/notes"
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

// oldPushSpecs are the push refspecs earlier versions of init added so that
// a plain `git push` carried memory. A configured push refspec replaces
// git's push.default: it published branches without upstream and failed on
// a detached HEAD or when a teammate had pushed memory first. init removes
// them; the pre-push hook carries memory instead.
var oldPushSpecs = []string{"refs/synaptic/*:refs/synaptic/*", "refs/notes/synaptic*:refs/notes/synaptic*"}

// prePushTimeout bounds how long the pre-push hook may hold the user's push.
const prePushTimeout = time.Minute

// AutoPushKey turns off pushing memory from the pre-push hook when false.
const AutoPushKey = "synaptic.autoPush"

// InitOptions configure Init.
type InitOptions struct {
	NoPush  bool   // do not push memory along with git push (synaptic.autoPush false)
	NoHooks bool   // do not install the git hooks
	Agent   string // also register the MCP server with this agent ("claude")
}

// InitReport says what Init changed.
type InitReport struct {
	Changes   []string `json:"changes"`
	CachePath string   `json:"cache"`
}

// Init configures the repository for memory: fetch (and push) refspecs on
// every remote, notes.rewriteRef so notes follow amend and rebase, and the
// cache. Running it again changes nothing.
func (s *Service) Init(ctx context.Context, opts InitOptions) (InitReport, error) {
	rep := InitReport{CachePath: s.CachePath()}
	add := func(key, val string) error {
		added, err := s.repo.ConfigAddUnique(ctx, key, val)
		if added {
			rep.Changes = append(rep.Changes, fmt.Sprintf("config %s += %s", key, val))
		}
		return err
	}
	remotes, err := s.repo.Remotes(ctx)
	if err != nil {
		return rep, err
	}
	for _, r := range remotes {
		for _, spec := range fetchSpecs(r) {
			if err := add("remote."+r+".fetch", spec); err != nil {
				return rep, err
			}
		}
		removed, err := s.removeOldPushSpecs(ctx, r)
		rep.Changes = append(rep.Changes, removed...)
		if err != nil {
			return rep, err
		}
	}
	if opts.NoPush {
		if changed, err := s.repo.ConfigSet(ctx, AutoPushKey, "false"); err != nil {
			return rep, err
		} else if changed {
			rep.Changes = append(rep.Changes, "config "+AutoPushKey+" = false")
		}
	}
	if err := add("notes.rewriteRef", gitstore.NotesRef); err != nil {
		return rep, err
	}
	if opts.Agent != "" {
		changes, err := s.ConfigureAgent(opts.Agent)
		rep.Changes = append(rep.Changes, changes...)
		if err != nil {
			return rep, err
		}
	}
	if !opts.NoHooks {
		h, err := s.InstallHooks(ctx)
		if err != nil {
			return rep, err
		}
		for name, action := range h.Actions {
			if action != "up to date" {
				rep.Changes = append(rep.Changes, fmt.Sprintf("hook %s: %s", name, action))
			}
		}
		sort.Strings(rep.Changes)
	}
	if _, err := s.ready(ctx); err != nil {
		return rep, err
	}
	return rep, nil
}

// removeOldPushSpecs takes out the push refspecs an earlier init added to
// remote r; "HEAD" goes too when it came with them.
func (s *Service) removeOldPushSpecs(ctx context.Context, r string) ([]string, error) {
	key := "remote." + r + ".push"
	vals, err := s.repo.ConfigGetAll(ctx, key)
	if err != nil {
		return nil, err
	}
	ours := 0
	for _, v := range vals {
		if slices.Contains(oldPushSpecs, v) {
			ours++
		}
	}
	if ours == 0 {
		return nil, nil
	}
	drop := oldPushSpecs
	if ours == len(oldPushSpecs) {
		drop = append(drop, "HEAD")
	}
	var changes []string
	for _, v := range drop {
		if slices.Contains(vals, v) {
			if err := s.repo.ConfigUnsetValue(ctx, key, v); err != nil {
				return changes, err
			}
			changes = append(changes, fmt.Sprintf("config %s -= %s (memory now goes with the pre-push hook)", key, v))
		}
	}
	return changes, nil
}

// PrePush pushes memory to remote alongside the user's git push (the
// pre-push hook). It costs nothing when the remote already has this
// memory; when a teammate pushed memory first, it fetches, merges and
// pushes again (a sync). It never touches the user's branches, and the hook
// ignores its error: the user's push goes on either way.
func (s *Service) PrePush(ctx context.Context, remote string) (pushed bool, err error) {
	if on, set, err := s.repo.ConfigBool(ctx, AutoPushKey); err != nil || (set && !on) {
		return false, err
	}
	remotes, err := s.repo.Remotes(ctx)
	if err != nil || !slices.Contains(remotes, remote) {
		return false, err // a push to a URL: memory goes with sync
	}
	push, _, err := s.unpushed(remote) // sync reports the bad refs
	if err != nil || len(push) == 0 {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, prePushTimeout)
	defer cancel()
	rep, err := s.Sync(ctx, remote)
	return len(rep.Pushed) > 0, err
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
func (s *Service) DefaultRemote(ctx context.Context) (string, error) {
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
func (s *Service) Sync(ctx context.Context, remote string) (SyncReport, error) {
	remote, err := s.syncRemote(ctx, remote)
	if err != nil {
		return SyncReport{}, err
	}
	rep := SyncReport{Remote: remote, Merged: map[string]string{}}
	if st, err := s.stats(ctx); err == nil {
		rep.Before = st.Total
	}
	for attempt := 0; ; attempt++ {
		if err := s.fetchAndMerge(ctx, remote, rep.Merged); err != nil {
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
		err = s.repo.Push(ctx, remote, append(leases, push...)...)
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
	s.fresh = false
	st, err := s.stats(ctx)
	if err != nil {
		return rep, err
	}
	rep.After = st.Total
	return rep, nil
}

// syncRemote is the remote a sync talks to: remote, or the default one;
// an error when there is no such remote.
func (s *Service) syncRemote(ctx context.Context, remote string) (string, error) {
	var err error
	if remote == "" {
		if remote, err = s.DefaultRemote(ctx); err != nil {
			return "", err
		}
	}
	if strings.HasPrefix(remote, "-") {
		return "", fmt.Errorf("%w: %q is not a remote name", notes.ErrInvalid, remote)
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
// local ref, noting in merged what happened to each. Garbage on the remote
// is skipped with a warning: it must not stop the rest of memory syncing.
func (s *Service) fetchAndMerge(ctx context.Context, remote string, merged map[string]string) error {
	if err := s.repo.Fetch(ctx, remote, fetchSpecs(remote)...); err != nil {
		return err
	}
	tracking, err := s.repo.Refs(trackingRef(remote, sharedPrefix))
	if err != nil {
		return err
	}
	notesTracking := trackingRef(remote, gitstore.NotesRef)
	if h, err := s.repo.Tip(notesTracking); err == nil && !h.IsZero() {
		tracking[notesTracking] = h
	}
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

// recordPushed moves the remote-tracking refs to what the remote now
// holds, so that status and the next command see them in step. After a
// push that replaced history (a purge, rewrote), the reflogs that still
// name the old tips are expired.
func (s *Service) recordPushed(ctx context.Context, remote string, push []string, rewrote bool) error {
	for _, spec := range push {
		local, _, _ := strings.Cut(spec, ":")
		h, err := s.repo.Tip(local)
		if err != nil || h.IsZero() {
			continue
		}
		tr := trackingRef(remote, local)
		if err := s.repo.SetRef(ctx, tr, h); err == nil && s.cache != nil {
			s.cache.SetMeta(ctx, mergedKey+tr, h.String())
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
func (s *Service) leases(ctx context.Context, remote string, specs []string) []string {
	var out []string
	for _, spec := range specs {
		local, dst, _ := strings.Cut(spec, ":")
		if dst == "" {
			dst = local
		}
		theirs, err := s.repo.Tip(trackingRef(remote, local))
		if err != nil || theirs.IsZero() {
			continue
		}
		ours, err := s.repo.Tip(local)
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
func (s *Service) pushable(ctx context.Context, remote string) ([]string, error) {
	specs, bad, err := s.unpushed(remote)
	for ref, err := range bad {
		s.warnf("not pushing %s: %v", ref, err)
	}
	return specs, err
}

// unpushed lists push refspecs for the local memory refs whose tips differ
// from what remote was last seen to hold, and apart the refs that do not
// point at a readable commit, with the reason.
func (s *Service) unpushed(remote string) (specs []string, bad map[string]error, err error) {
	local, err := s.repo.Refs(sharedPrefix, gitstore.NotesRef)
	if err != nil {
		return nil, nil, err
	}
	bad = map[string]error{}
	for ref, h := range local {
		tr := trackingRef(remote, ref)
		if t, _ := s.repo.Tip(tr); t == h {
			continue
		}
		if _, err := s.repo.CommitTree(h); err != nil {
			bad[ref] = err
			continue
		}
		specs = append(specs, ref+":"+ref)
	}
	sort.Strings(specs)
	return specs, bad, nil
}

func (s *Service) stats(ctx context.Context) (cache.Stats, error) {
	var st cache.Stats
	err := s.withCache(ctx, func(c *cache.Cache) error {
		var err error
		st, err = c.Stats(ctx)
		return err
	})
	return st, err
}

// RefStatus is one memory ref.
type RefStatus struct {
	Ref     string `json:"ref"`
	Tip     string `json:"tip"`
	Indexed bool   `json:"indexed"`
}

// RemoteStatus compares local memory with what was last fetched from a remote.
type RemoteStatus struct {
	Remote     string `json:"remote"`
	Ref        string `json:"ref"`
	Ahead      int    `json:"ahead"`
	Behind     int    `json:"behind"`
	State      string `json:"state"`
	Configured bool   `json:"configured"`
}

// Status is the state of memory in this repository.
type Status struct {
	Project    string          `json:"project"`
	Stats      cache.Stats     `json:"counts"`
	CachePath  string          `json:"cache"`
	CacheBytes int64           `json:"cache_bytes"`
	Refs       []RefStatus     `json:"refs"`
	Remotes    []RemoteStatus  `json:"remotes"`
	Problems   []cache.Problem `json:"problems"`
	// Repaired lists where the cache had drifted from the refs; status
	// rebuilt it (empty when it was consistent).
	Repaired []string `json:"repaired,omitempty"`
	// Hooks maps each git hook git-synaptic uses to its state.
	Hooks map[string]string `json:"hooks,omitempty"`
	// Search is how search ranks here: "hybrid (MODEL, RUNTIME)" or
	// "lexical (BM25 only): WHY" (model status has the details).
	Search string `json:"search"`
	// Cochange is the co-change ranking's self-tuning (nil before git
	// synaptic index has seen enough history).
	Cochange *cochange.Tuning `json:"cochange_tuning,omitempty"`
}

// Status reports counts, cache state, ref tips and remote sync state.
func (s *Service) Status(ctx context.Context) (Status, error) {
	st := Status{Project: s.Project(ctx), CachePath: s.CachePath(), Search: s.searchDescription()}
	var err error
	if st.Stats, err = s.stats(ctx); err != nil {
		return st, err
	}
	if fi, err := os.Stat(s.CachePath()); err == nil {
		st.CacheBytes = fi.Size()
	}
	if wal, err := os.Stat(s.CachePath() + "-wal"); err == nil {
		st.CacheBytes += wal.Size()
	}
	if st.Repaired, err = s.verifyIndex(ctx); err != nil {
		return st, err
	}
	if len(st.Repaired) > 0 {
		if st.Stats, err = s.stats(ctx); err != nil {
			return st, err
		}
	}
	c := s.cache
	tips, err := c.Tips(ctx)
	if err != nil {
		return st, err
	}
	local, _, err := s.memoryRefs()
	if err != nil {
		return st, err
	}
	for ref, h := range local {
		st.Refs = append(st.Refs, RefStatus{Ref: ref, Tip: h.String(), Indexed: tips[ref] == h.String()})
	}
	sort.Slice(st.Refs, func(i, j int) bool { return st.Refs[i].Ref < st.Refs[j].Ref })
	if st.Problems, err = c.Problems(ctx); err != nil {
		return st, err
	}
	if _, h, err := s.HooksStatus(ctx); err == nil {
		st.Hooks = h
	}
	if st.Cochange, err = s.tuning(ctx); err != nil {
		return st, err
	}
	remotes, err := s.repo.Remotes(ctx)
	if err != nil {
		return st, err
	}
	for _, r := range remotes {
		specs, _ := s.repo.ConfigGetAll(ctx, "remote."+r+".fetch")
		configured := false
		for _, sp := range specs {
			configured = configured || sp == fetchSpecs(r)[0]
		}
		for _, ref := range []string{SharedRef, gitstore.NotesRef} {
			tr := trackingRef(r, ref)
			lt, _ := s.repo.Tip(ref)
			rt, _ := s.repo.Tip(tr)
			rs := RemoteStatus{Remote: r, Ref: ref, Configured: configured}
			switch {
			case lt.IsZero() && rt.IsZero():
				rs.State = "empty"
			case rt.IsZero():
				rs.State = "not fetched or not pushed yet"
				rs.Ahead, _, _ = s.repo.AheadBehind(ctx, lt, rt)
			default:
				rs.Ahead, rs.Behind, err = s.repo.AheadBehind(ctx, lt, rt)
				if err != nil {
					rs.State = "unknown: " + err.Error()
					break
				}
				rs.State = syncState(rs.Ahead, rs.Behind)
			}
			st.Remotes = append(st.Remotes, rs)
		}
	}
	return st, nil
}

func syncState(ahead, behind int) string {
	switch {
	case ahead == 0 && behind == 0:
		return "in sync"
	case behind == 0:
		return fmt.Sprintf("ahead by %d (git synaptic sync to push)", ahead)
	case ahead == 0:
		return fmt.Sprintf("behind by %d (git synaptic sync to merge)", behind)
	}
	return fmt.Sprintf("diverged: %d ahead, %d behind (git synaptic sync)", ahead, behind)
}

// searchDescription says how search will rank without loading the model.
func (s *Service) searchDescription() string {
	if s.emb != nil {
		return fmt.Sprintf("hybrid (BM25 + %s vectors, %s)", s.emb.ModelID(), s.emb.Backend())
	}
	m, err := embed.Find(s.embModel)
	if err != nil {
		return "lexical (BM25 only): " + err.Error()
	}
	runtime := "pure-Go runtime"
	if embed.FindORTLibrary() != "" {
		runtime = "ONNX Runtime"
	}
	return fmt.Sprintf("hybrid (BM25 + %s vectors, %s)", m.ID(), runtime)
}

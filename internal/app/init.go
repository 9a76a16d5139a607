package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/lockfile"
)

// oldPushSpecs are the push refspecs earlier versions of init added so that
// a plain `git push` carried memory. A configured push refspec replaces
// git's push.default: it published branches without upstream and failed on
// a detached HEAD or when a teammate had pushed memory first. init removes
// them; the pre-push hook carries memory instead.
var oldPushSpecs = []string{"refs/synaptic/*:refs/synaptic/*", "refs/notes/synaptic*:refs/notes/synaptic*"}

// InitOptions configure Init.
type InitOptions struct {
	NoPush  bool // do not push memory along with git push (synaptic.autoPush false)
	NoHooks bool // do not install the git hooks
}

// InitReport says what Init changed.
type InitReport struct {
	Changes   []string `json:"changes"`
	CachePath string   `json:"cache"`
	// Fetched lists the remotes init set up and fetched memory from, and
	// why a fetch failed (offline, unreachable): init goes on either way,
	// and sync fetches later.
	Fetched []RemoteFetch `json:"fetched,omitempty"`
}

// RemoteFetch is init's fetch of one remote's memory.
type RemoteFetch struct {
	Remote string `json:"remote"`
	Error  string `json:"error,omitempty"`
}

// initFetchSilence is how long init's fetch of a remote's memory may go
// without a word from git (an unreachable or silent remote) before init
// goes on without it. It bounds silence, not the fetch: a clone of a
// million entries' memory transfers for longer than that, and an overall
// bound left it with no memory at all.
const initFetchSilence = 30 * time.Second

// Init configures the repository for memory: fetch refspecs on every
// remote (and fetches the memory of each remote it sets up, so that a
// fresh clone has it at once), notes.rewriteRef so notes follow amend and
// rebase, the git hooks, and the cache. Running it again changes nothing.
func (s *Sharing) Init(ctx context.Context, opts InitOptions) (InitReport, error) {
	rep := InitReport{CachePath: s.cachePath()}
	// Two inits at once would race on git's config lock (the loser fails
	// with "could not lock config file") and on the hooks: one at a time.
	unlock, err := lockfile.Lock(filepath.Join(s.repo.CommonDir(), "synaptic", "init.lock"))
	if err != nil {
		return rep, err
	}
	defer unlock()
	add := func(key, val string) error {
		added, err := s.repo.ConfigAddUnique(ctx, key, val)
		if added {
			rep.Changes = append(rep.Changes, fmt.Sprintf("config %s += %s", key, val))
		}
		return err
	}
	fresh, err := s.initRemotes(ctx, &rep, add)
	if err != nil {
		return rep, err
	}
	if opts.NoPush {
		if changed, err := s.repo.ConfigSet(ctx, AutoPushKey, "false"); err != nil {
			return rep, err
		} else if changed {
			rep.Changes = append(rep.Changes, "config "+AutoPushKey+" = false")
		}
	}
	if err := s.rewriteNotes(ctx, &rep, add); err != nil {
		return rep, err
	}
	if !opts.NoHooks {
		h, err := s.hist.InstallHooks(ctx)
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
	// A fresh clone has its remote's memory one fetch away: fetched now,
	// init shows it at once.
	if len(fresh) > 0 {
		before, _ := s.count(ctx)
		for _, r := range fresh {
			rep.Fetched = append(rep.Fetched, s.initFetch(ctx, r))
		}
		s.conn.refsMoved() // the refs moved under this request
		if after, err := s.count(ctx); err == nil && after > before {
			rep.Changes = append(rep.Changes, fmt.Sprintf("memory fetched: %d new entries", after-before))
		}
	}
	if _, err := s.ready(ctx); err != nil {
		return rep, err
	}
	// The project list serves searches across projects; a repository
	// missing from it loses nothing, so failing to write it fails nothing.
	if added, err := s.Register(); err != nil {
		s.warnf("could not add this repository to your project list: %v", err)
	} else if added {
		rep.Changes = append(rep.Changes, "project list += "+homePath(s.repo))
	}
	return rep, nil
}

// initRemotes adds memory's fetch refspecs to every remote (with add) and
// takes out the push refspecs older versions set, and returns the remotes
// set up now, whose memory Init fetches.
// notesRewriteRef names the notes ref for notes.rewriteRef as a glob that
// matches it alone: git reads a plain name even when the ref does not
// exist, and then says "notes ref refs/notes/synaptic is invalid" on
// every amend and rebase until the first note is written; a glob only
// matches refs that exist.
const notesRewriteRef = "refs/notes/synapti[c]"

// rewriteNotes sets notes.rewriteRef so that commit notes follow amend
// and rebase, replacing the plain name earlier versions set.
func (s *Sharing) rewriteNotes(ctx context.Context, rep *InitReport, add func(key, val string) error) error {
	if err := add("notes.rewriteRef", notesRewriteRef); err != nil {
		return err
	}
	vals, err := s.repo.ConfigGetAll(ctx, "notes.rewriteRef")
	if err != nil || !slices.Contains(vals, gitstore.NotesRef) {
		return err
	}
	if err := s.repo.ConfigUnsetValue(ctx, "notes.rewriteRef", gitstore.NotesRef); err != nil {
		return err
	}
	rep.Changes = append(rep.Changes, "config notes.rewriteRef -= "+gitstore.NotesRef)
	return nil
}

func (s *Sharing) initRemotes(ctx context.Context, rep *InitReport, add func(key, val string) error) (fresh []string, err error) {
	remotes, err := s.repo.Remotes(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range remotes {
		n := len(rep.Changes)
		for _, spec := range fetchSpecs(r) {
			if err := add("remote."+r+".fetch", spec); err != nil {
				return nil, err
			}
		}
		if len(rep.Changes) > n {
			fresh = append(fresh, r)
		}
		removed, err := s.removeOldPushSpecs(ctx, r)
		rep.Changes = append(rep.Changes, removed...)
		if err != nil {
			return nil, err
		}
	}
	return fresh, nil
}

// initFetch fetches and merges remote's memory for Init, and says how it
// went; it fails nothing.
func (s *core) initFetch(ctx context.Context, remote string) RemoteFetch {
	if err := s.fetchAndMerge(ctx, remote, initFetchSilence, map[string]string{}); err != nil {
		why := err.Error()
		if ge := (*gitstore.GitError)(nil); errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) != "" {
			why = ge.Stderr // git's own words, not its command line
		}
		return RemoteFetch{Remote: remote, Error: FirstLine(strings.TrimSpace(why), 200)}
	}
	return RemoteFetch{Remote: remote}
}

// removeOldPushSpecs takes out the push refspecs an earlier init added to
// remote r; "HEAD" goes too when it came with them.
func (s *core) removeOldPushSpecs(ctx context.Context, r string) ([]string, error) {
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

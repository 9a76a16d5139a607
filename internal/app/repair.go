package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/atomicfile"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Memory refs can lose objects outside git-synaptic's control: git gc
// --prune=now beside a writer that was killed before it could write
// again what gc pruned, a disk error, a ref written by hand. A ref with
// missing objects breaks more than memory: git fetch refuses to run at
// all while any ref points at a missing object. status finds such refs
// (checking only what is new since its last check) and repair mends them.

// Damage is a memory ref whose history lacks objects.
type Damage struct {
	Ref     string `json:"ref"`
	Tip     string `json:"tip"`
	Missing int    `json:"missing_objects"`
	// Dangling: the tip itself is gone.
	Dangling bool `json:"dangling"`
}

// verifiedPath records, per ref, the last tip found complete, so the next
// check reads only what is newer. It sits beside the cache: losing it
// costs one full check.
func (s *core) verifiedPath() string {
	return filepath.Join(filepath.Dir(s.cachePath()), "verified-tips.json")
}

func (s *core) readVerified() map[string]string {
	m := map[string]string{}
	if b, err := os.ReadFile(s.verifiedPath()); err == nil {
		json.Unmarshal(b, &m)
	}
	return m
}

// fetchedComplete records the tips a fetch just wrote as complete: git
// fetch checks that everything reachable from what it fetched is present,
// so the next damage check need not read that history again (at a million
// entries, reading it took longer than the fetch).
func (s *core) fetchedComplete(tips map[string]gitstore.Hash) {
	verified := s.readVerified()
	for ref, tip := range tips {
		verified[ref] = tip.String()
	}
	s.writeVerified(verified)
}

// completeKin are the tips found complete of ref and of the refs it syncs
// with: a local memory ref and its remote-tracking copies.
func completeKin(verified map[string]string, ref string) []gitstore.Hash {
	var out []gitstore.Hash
	for r, tip := range verified {
		if syncKey(r) == syncKey(ref) {
			out = append(out, gitstore.NewHash(tip))
		}
	}
	return out
}

// syncKey names the local memory ref that ref is, or that it is a
// remote-tracking copy of.
func syncKey(ref string) string {
	if local, ok := trackedLocal(ref); ok {
		return local
	}
	return ref
}

func (s *core) writeVerified(m map[string]string) {
	b, _ := json.Marshal(m)
	atomicfile.Write(s.verifiedPath(), b, 0o600) // only saves work next time
}

// damaged checks every memory ref, local and remote-tracking, and lists
// those whose history lacks objects. Only what is new is read: history
// reachable from a tip found complete before (the ref's own, or that of
// a ref it syncs with, which lives in the same repository) is not read
// again, and a tip already found complete is not read at all.
func (s *core) damaged(ctx context.Context) ([]Damage, error) {
	local, tracking, err := s.memoryRefs()
	if err != nil {
		return nil, err
	}
	verified := s.readVerified()
	changed := false
	var out []Damage
	for _, refs := range []map[string]gitstore.Hash{local, tracking} {
		for ref, tip := range refs {
			if verified[ref] == tip.String() {
				continue
			}
			bases := completeKin(verified, ref)
			if !slices.Contains(bases, tip) {
				missing, err := s.repo.MissingSince(ctx, ref, tip, bases...)
				if err != nil {
					return nil, fmt.Errorf("check %s: %w", ref, err)
				}
				if len(missing) > 0 {
					out = append(out, Damage{Ref: ref, Tip: tip.String(), Missing: len(missing), Dangling: missing[0] == tip})
					continue
				}
			}
			verified[ref], changed = tip.String(), true
		}
	}
	if changed {
		s.writeVerified(verified)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out, nil
}

// RefRepair says what repair did to one ref.
type RefRepair struct {
	Ref    string `json:"ref"`
	From   string `json:"from"`
	To     string `json:"to,omitempty"` // empty: the ref was removed
	Action string `json:"action"`
	// Recovered lists the documents written again from the cache.
	Recovered int `json:"recovered_documents"`
	// Missing is how many objects the damaged history lacked.
	Missing int `json:"missing_objects"`
}

// Repair mends every damaged memory ref: a local memory ref moves back to
// its newest complete commit and gets back, from the cache, the entries
// and operations git lost; a remote-tracking or subscription ref is
// removed (the next sync fetches it again); any other ref under
// refs/synaptic/ whose tip is gone is removed. Each step is recorded in
// synaptic/repair.log in the git dir.
func (s *Memory) Repair(ctx context.Context) ([]RefRepair, error) {
	damage, err := s.damaged(ctx)
	if err != nil {
		return nil, err
	}
	return s.repair(ctx, damage)
}

// repair mends the damage damaged found.
func (s *Memory) repair(ctx context.Context, damage []Damage) ([]RefRepair, error) {
	var out []RefRepair
	for _, d := range damage {
		r, err := s.repairRef(ctx, d)
		if err != nil {
			return out, fmt.Errorf("repair %s: %w", d.Ref, err)
		}
		s.logRepair(r)
		out = append(out, r)
	}
	if len(out) > 0 { // index the mended refs afresh, and forget what the damage made unreadable
		s.conn.refsMoved()
		if err := s.rebuildMemory(ctx); err != nil {
			s.warnf("repaired, but the cache could not be rebuilt (the next command retries): %v", err)
		}
	}
	return out, nil
}

func (s *Memory) repairRef(ctx context.Context, d Damage) (RefRepair, error) {
	tip := gitstore.NewHash(d.Tip)
	r := RefRepair{Ref: d.Ref, From: d.Tip, Missing: d.Missing}
	owned := d.Ref == SharedRef || d.Ref == PrivateRef || d.Ref == gitstore.NotesRef
	if !owned {
		r.Action = "removed (fetched again by the next sync)"
		if strings.HasPrefix(d.Ref, sharedPrefix) {
			r.Action = "removed (it pointed at objects this repository does not have)"
		}
		return r, s.repo.DeleteRef(ctx, d.Ref)
	}
	good := s.newestComplete(ctx, d.Ref, tip)
	var docs []cache.Doc
	if d.Ref != gitstore.NotesRef {
		if err := s.withCache(ctx, func(c *cache.Cache) error {
			var err error
			docs, err = c.Documents(ctx, d.Ref)
			return err
		}); err != nil {
			s.warnf("the cache cannot give back lost entries: %v", err)
		}
	}
	have := map[string]bool{}
	if !good.IsZero() {
		for _, dir := range []string{memory.EntriesDir, memory.OpsDir} {
			files, err := s.repo.FilesUnder(good, dir)
			if err != nil {
				return r, err
			}
			for p := range files {
				have[p] = true
			}
		}
	}
	var files []gitstore.File
	for _, doc := range docs {
		if !have[doc.Path] {
			files = append(files, gitstore.File{Path: doc.Path, Data: doc.Data})
		}
	}
	// One ref move: moving back first and writing the lost documents
	// after would, if killed between, let the cache forget them.
	switch {
	case len(files) > 0:
		c, err := s.repo.Replace(ctx, d.Ref, tip, good, files, s.sig(ctx), fmt.Sprintf("repair: %d documents written again from the cache", len(files)))
		if err != nil {
			return r, err
		}
		r.To, r.Recovered = c.String(), len(files)
		r.Action = "moved back to its newest complete commit, lost documents written again from the cache"
	case good.IsZero():
		r.Action = "removed (no complete commit left)"
		return r, s.repo.DeleteRef(ctx, d.Ref)
	default:
		r.To, r.Action = good.String(), "moved back to its newest complete commit"
		return r, s.log.CompareAndSwap(ctx, d.Ref, good, tip)
	}
	return r, nil
}

// newestComplete is the newest commit of ref whose whole history is
// present: tip's first-parent line, then the cache's and the last check's
// tips for ref; ZeroHash when none is.
func (s *Memory) newestComplete(ctx context.Context, ref string, tip gitstore.Hash) gitstore.Hash {
	var cands []gitstore.Hash
	for c, n := tip, 0; !c.IsZero() && n < 50; n++ {
		cands = append(cands, c)
		ps, err := s.repo.Parents(c)
		if err != nil || len(ps) == 0 {
			break
		}
		c = ps[0]
	}
	if v := s.readVerified()[ref]; v != "" {
		cands = append(cands, gitstore.NewHash(v))
	}
	s.withCache(ctx, func(c *cache.Cache) error {
		if tips, err := c.Tips(ctx); err == nil && tips[ref] != "" {
			cands = append(cands, gitstore.NewHash(tips[ref]))
		}
		return nil
	})
	for _, c := range cands {
		if missing, err := s.repo.MissingSince(ctx, ref, c); err == nil && len(missing) == 0 {
			return c
		}
	}
	return gitstore.ZeroHash
}

// logRepair appends what repair did to synaptic/repair.log.
func (s *core) logRepair(r RefRepair) {
	f, err := os.OpenFile(filepath.Join(filepath.Dir(s.cachePath()), "repair.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s %s -> %s: %s (%d objects missing, %d documents recovered)\n", s.now().UTC().Format(time.RFC3339), r.Ref, r.From, r.To, r.Action, r.Missing, r.Recovered)
}

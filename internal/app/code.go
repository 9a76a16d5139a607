package app

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Memory that knows the code. Every entry is anchored to the commit HEAD
// was on when it was written, with the files its text names and their
// blobs there (memory.Entry.Anchor and Files). Read against this
// worktree's HEAD:
//
//   - an entry whose anchor HEAD does not contain (nor a rebased or
//     squashed copy of it: gitstore.OffLine) was written on another
//     branch's unmerged work: search ranks it below
//     (rank.OffLinePrior), Branches: BranchesThis leaves it out, and it
//     is marked "[on feature/x, not merged]";
//   - an entry naming files that changed since it was written, or last
//     confirmed (an edit or relevant feedback records HEAD again), is
//     marked "[billing/retry.go changed in 14 commits since]".
//
// Everything is a local git read; verdicts are kept in the cache per
// HEAD.

// Branches says how reads treat memory written on another branch's
// unmerged work.
type Branches string

// Branch scopes.
const (
	BranchesDefault Branches = ""     // ranked below and marked
	BranchesThis    Branches = "this" // left out (--this-branch)
	BranchesAll     Branches = "all"  // ranked as any other, still marked (--all-branches)
)

// ParseBranches reads a branch scope: "", "default", "this" or "all".
func ParseBranches(s string) (Branches, error) {
	switch s {
	case "", "default":
		return BranchesDefault, nil
	case "this", "all":
		return Branches(s), nil
	}
	return "", Invalidf("unknown branches %q (want this or all)", s)
}

// StaleFile is a file an entry names that changed since the entry was
// written or last confirmed.
type StaleFile struct {
	Path string `json:"path"`
	// Commits is how many commits changed it since (0: not known, as when
	// the entry's commit is not in this clone).
	Commits int  `json:"commits,omitempty"`
	Deleted bool `json:"deleted,omitempty"`
}

// CodeMarks is what an entry's standing against the code adds to its
// line: "[on feature/x, not merged]", "[a.go changed in 3 commits
// since]", "[b.go deleted]"; "" when there is nothing to say.
func CodeMarks(e Entry) string {
	var parts []string
	if e.Unmerged != "" {
		parts = append(parts, "[on "+e.Unmerged+", not merged]")
	}
	for _, f := range e.Stale {
		switch {
		case f.Deleted:
			parts = append(parts, "["+f.Path+" deleted]")
		case f.Commits > 0:
			parts = append(parts, fmt.Sprintf("[%s changed in %s since]", f.Path, Plural(f.Commits, "commit")))
		default:
			parts = append(parts, "["+f.Path+" changed since]")
		}
	}
	return strings.Join(parts, " ")
}

// withMarks is head followed by e's code marks, if any.
func withMarks(head string, e Entry) string {
	if m := CodeMarks(e); m != "" {
		return head + " " + m
	}
	return head
}

// codeView is memory's standing against one HEAD: the anchors off its
// line of history, as of a generation of the indexed entries, and the
// blobs of the files asked about so far (path → blob id, "" for none).
type codeView struct {
	head  string // "" on an unborn branch
	gen   string // the cache's entries generation the verdicts are of
	off   map[string]bool
	blobs map[string]string
}

// lineMemo keeps the last view this process made, per HEAD.
type lineMemo struct {
	mu   sync.Mutex
	view *codeView
}

// view is the standing of indexed memory against HEAD, judging anchors
// not judged for this HEAD yet. It never fails a read: when git cannot
// say, nothing is off the line.
func (s *core) view(ctx context.Context, c *cache.Cache) *codeView {
	s.lines.mu.Lock()
	defer s.lines.mu.Unlock()
	v := &codeView{off: map[string]bool{}, blobs: map[string]string{}}
	if s.noCodeChecks {
		return v
	}
	if h, err := s.repo.Head(); err == nil && !h.IsZero() {
		v.head = h.String()
	}
	v.gen, _ = c.Meta(ctx, "entries_gen")
	if m := s.lines.view; m != nil && m.head == v.head && m.gen == v.gen {
		return m // nothing indexed since: no new anchor
	}
	unjudged, err := c.UnjudgedAnchors(ctx, v.head, subPrefix)
	if err != nil {
		return v
	}
	if len(unjudged) == 0 && s.lines.view != nil && s.lines.view.head == v.head {
		s.lines.view.gen = v.gen
		return s.lines.view
	}
	if len(unjudged) > 0 {
		pids, err := c.PatchIDs(ctx)
		if err != nil {
			return v
		}
		known := make(map[string]bool, len(pids))
		for k := range pids {
			known[k] = true
		}
		off, err := s.repo.OffLine(ctx, v.head, unjudged, pids)
		if err != nil {
			s.warnf("cannot tell which memory is on this branch: %v", err)
			return v
		}
		fresh := map[string]string{}
		for k, p := range pids {
			if !known[k] {
				fresh[k] = p
			}
		}
		_ = c.AddPatchIDs(ctx, fresh) // a patch id never changes: kept for good
		if err := c.JudgeLine(ctx, v.head, unjudged, off, s.now()); err != nil {
			// unrecorded, still right for this command
			for a := range off {
				v.off[a] = true
			}
		}
	}
	off, err := c.OffLine(ctx, v.head)
	if err != nil {
		return v
	}
	for a := range off {
		v.off[a] = true
	}
	s.lines.view = v
	return v
}

// filter is f for the cache under this view.
func (v *codeView) filter(f Filter) cache.Filter {
	cf := cache.Filter{Types: f.Types, Tags: f.Tags, Tier: f.Tier, Since: f.Since, Until: f.Until, Author: f.Author, Project: f.Project,
		Branch: f.Branch, Session: f.Session, IncludeArchived: f.IncludeArchived, OnlyArchived: f.OnlyArchived, Limit: f.Limit}
	if f.Branches == BranchesThis {
		for a := range v.off {
			cf.LeaveOut = append(cf.LeaveOut, a)
		}
		sort.Strings(cf.LeaveOut)
	}
	return cf
}

// demote is the anchors search ranks below under scope b.
func (v *codeView) demote(b Branches) map[string]bool {
	if b == BranchesAll || len(v.off) == 0 {
		return nil
	}
	return v.off
}

// mark sets each entry's Unmerged and Stale against this view.
func (s *core) mark(ctx context.Context, c *cache.Cache, v *codeView, es []*Entry) {
	if s.noCodeChecks {
		return
	}
	type key struct{ base, path string }
	var paths []string
	var check []*Entry // the entries whose files are read against HEAD
	seen := map[string]bool{}
	for _, e := range es {
		e.Unmerged, e.Stale = "", nil
		switch {
		case SubscriptionOf(e.Source) != "":
			continue // another repository's commits: nothing to read here
		case e.Anchor != "" && v.off[e.Anchor]:
			// It describes another branch's code: its files differ here
			// because that branch changed them, not because they aged.
			e.Unmerged = branchLabel(e.Branch, e.Anchor)
			continue
		case e.Checked() == "" || len(e.Files) == 0:
			continue
		}
		check = append(check, e)
		for p := range e.Files {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	if v.head == "" || len(paths) == 0 {
		return
	}
	now, err := s.blobsAt(ctx, v, paths)
	if err != nil {
		return
	}
	var changes []cache.FileChange
	at := map[key]int{}
	for _, e := range check {
		for p, blob := range e.Files {
			if now[p] != "" && now[p] != blob {
				k := key{e.Checked(), p}
				if _, ok := at[k]; !ok {
					at[k] = len(changes)
					changes = append(changes, cache.FileChange{Head: v.head, Base: k.base, Path: p})
				}
			}
		}
	}
	known, err := c.FileChanges(ctx, changes)
	if err != nil {
		known = make([]bool, len(changes))
	}
	var counted []cache.FileChange
	for i := range changes {
		if !known[i] {
			n, err := s.repo.CountChanges(ctx, changes[i].Base, v.head, changes[i].Path)
			if err != nil {
				n = 0 // the base is not here: changed, by how much unknown
			}
			changes[i].N = n
			counted = append(counted, changes[i])
		}
	}
	_ = c.AddFileChanges(ctx, counted)
	for _, e := range check {
		for _, p := range sortedKeys(e.Files) {
			switch {
			case now[p] == "":
				e.Stale = append(e.Stale, StaleFile{Path: p, Deleted: true})
			case now[p] != e.Files[p]:
				e.Stale = append(e.Stale, StaleFile{Path: p, Commits: changes[at[key{e.Checked(), p}]].N})
			}
		}
	}
}

// blobsAt is the blob of each of paths at the view's HEAD ("" for none),
// asking git only for those the view has not looked up yet.
func (s *core) blobsAt(ctx context.Context, v *codeView, paths []string) (map[string]string, error) {
	s.lines.mu.Lock()
	defer s.lines.mu.Unlock()
	var ask []string
	for _, p := range paths {
		if _, ok := v.blobs[p]; !ok {
			ask = append(ask, p)
		}
	}
	if len(ask) > 0 {
		sort.Strings(ask)
		got, err := s.repo.BlobsAt(ctx, v.head, ask)
		if err != nil {
			return nil, err
		}
		for _, p := range ask {
			v.blobs[p] = got[p]
		}
	}
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		out[p] = v.blobs[p]
	}
	return out, nil
}

// markEntries is mark over a slice.
func (s *core) markEntries(ctx context.Context, c *cache.Cache, v *codeView, rows []Entry) {
	ps := make([]*Entry, len(rows))
	for i := range rows {
		ps[i] = &rows[i]
	}
	s.mark(ctx, c, v, ps)
}

// markHits is mark over search hits.
func (s *core) markHits(ctx context.Context, c *cache.Cache, v *codeView, hits []Hit) {
	ps := make([]*Entry, len(hits))
	for i := range hits {
		ps[i] = &hits[i].Entry
	}
	s.mark(ctx, c, v, ps)
}

// branchLabel names where an unmerged entry was written: its branch, or
// its commit when it was written on a detached HEAD. A branch name comes
// from whoever wrote the entry: control characters are dropped.
func branchLabel(branch, anchor string) string {
	b := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, branch)
	if b == "" {
		return "commit " + anchor[:min(len(anchor), 12)]
	}
	return b
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// treeFiles is a commit's files with their blobs, and its paths by file
// name, so that a file name or partial path is resolved without reading
// every path.
type treeFiles struct {
	blobs  map[string]string
	byBase map[string][]string
}

// trees keeps the trees read, by commit, across the entries of one
// import.
type trees map[string]*treeFiles

// tree is commit's files, read once per trees (nil: nothing kept).
func (s *core) tree(ctx context.Context, commit string, ts trees) (*treeFiles, error) {
	if t := ts[commit]; t != nil {
		return t, nil
	}
	blobs, err := s.repo.TreeFiles(ctx, commit)
	if err != nil {
		return nil, err
	}
	t := &treeFiles{blobs: blobs, byBase: make(map[string][]string, len(blobs))}
	for p := range blobs {
		b := path.Base(p)
		t.byBase[b] = append(t.byBase[b], p)
	}
	if ts != nil {
		ts[commit] = t
	}
	return t, nil
}

// anchorFiles is HEAD and the files text names there with their blobs
// (none on an unborn branch). ts keeps the trees read across calls (nil:
// none kept).
func (s *core) anchorFiles(ctx context.Context, text string, ts trees) (string, map[string]string) {
	h, err := s.repo.Head()
	if err != nil || h.IsZero() {
		return "", nil
	}
	head := h.String()
	return head, s.filesAt(ctx, head, text, ts)
}

// filesAt is the files text names in commit's tree, with their blobs:
// a path as written, or the one file a partial path or file name
// ("retry.go", "billing/retry.go:42") ends; at most memory.MaxFiles.
func (s *core) filesAt(ctx context.Context, commit, text string, ts trees) map[string]string {
	names := fileMentions(text)
	if len(names) == 0 {
		return nil
	}
	tree, err := s.tree(ctx, commit, ts)
	if err != nil {
		return nil
	}
	files := map[string]string{}
	for _, n := range names {
		if len(files) == memory.MaxFiles {
			break
		}
		if blob, ok := tree.blobs[n]; ok {
			files[n] = blob
			continue
		}
		var match string
		count := 0
		for _, p := range tree.byBase[path.Base(n)] {
			if strings.HasSuffix(p, "/"+n) {
				match = p
				count++
			}
		}
		if count == 1 && memory.ValidPath(match) {
			files[match] = tree.blobs[match]
		}
	}
	if len(files) == 0 {
		return nil
	}
	return files
}

// aboutCandidates is how many of the best matches of a file's name
// MemoryAbout reads for those that name it.
const aboutCandidates = 20

// MemoryAbout returns the memory that names file, best first, at most n:
// entries whose text holds its path, or its file name as a whole name
// (namesFile). A file's name is a word to look up, not a meaning: the
// candidates are the best BM25 matches of the name without its extension
// (at least aboutCandidates of them), whether or not a model is loaded,
// so that the answer is the same either way; only those that name the
// file are kept, so "server.go" does not bring every entry about a
// server. types narrows the memory types (none: any but commits). Each
// entry returned counts as a use, as a search's hits do.
func (s *Recall) MemoryAbout(ctx context.Context, file string, types []memory.Type, n int) ([]Hit, error) {
	hits, err := s.memoryAbout(ctx, file, types, n)
	if err != nil || len(hits) == 0 {
		return hits, err
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	err = s.withCache(ctx, func(c *cache.Cache) error {
		s.noteUse(ctx, c, ids, s.sessionID(), false)
		return nil
	})
	return hits, err
}

// memoryAbout is MemoryAbout counting no use: the session start counts
// what it shows itself.
func (s *core) memoryAbout(ctx context.Context, file string, types []memory.Type, n int) ([]Hit, error) {
	if len(types) == 0 {
		types = append(slices.Clone(memory.SavableTypes), memory.TypeNote)
	}
	base := path.Base(file)
	hits, _, err := s.search(ctx, searchReq{query: strings.TrimSuffix(base, path.Ext(base)), filter: Filter{Limit: max(n, aboutCandidates), Types: types}, mode: "bm25", who: forHook})
	if errors.Is(err, ErrNoWords) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := hits[:0]
	for _, h := range hits {
		if namesFile(h.Content, file) && len(out) < n {
			out = append(out, h)
		}
	}
	return out, nil
}

// maxMentions bounds the names fileMentions returns.
const maxMentions = 64

// fileMentions are the words of text that may name a file: a path ("a/b",
// "./a/b.go") or a file name with an extension ("retry.go"), without a
// line number (":42") or the sentence's punctuation. URLs and version
// numbers are not names. The repository's tree decides which are files.
func fileMentions(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !pathRune(r) }) {
		w = strings.TrimRight(w, ".-")
		for strings.HasPrefix(w, "./") {
			w = w[2:]
		}
		if seen[w] || !memory.ValidPath(w) { // no absolute paths ("//host/..." of a URL included)
			continue
		}
		ext := path.Ext(w)
		if !strings.Contains(w, "/") && (len(ext) < 2 || !strings.ContainsFunc(ext, unicode.IsLetter)) {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == maxMentions {
			break
		}
	}
	return out
}

// pathRune reports whether r may be part of a file's path in prose.
func pathRune(r rune) bool {
	return r == '/' || r == '.' || r == '_' || r == '-' || r == '+' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

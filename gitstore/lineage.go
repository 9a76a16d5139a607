package gitstore

import (
	"bufio"
	"context"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Where memory stands against the code: which commits are on HEAD's line
// of history, what files hold at a commit, and the commits that changed
// a file since another. Everything is a local git read.

// literal makes git read pathspecs as plain paths (a file named "*.go"
// is that file, not a pattern).
var literal = []string{"GIT_LITERAL_PATHSPECS=1"}

// TreeFiles lists the files (blobs) of commit rev's tree with their blob
// ids, by path.
func (r *Repo) TreeFiles(ctx context.Context, rev string) (map[string]string, error) {
	out, err := r.run(ctx, nil, nil, "ls-tree", "-r", "-z", "--full-tree", rev)
	if err != nil {
		return nil, err
	}
	return parseLsTree(out), nil
}

// BlobsAt is the blob id of each of paths in commit rev's tree; a path
// that is not a file there is absent from the map.
func (r *Repo) BlobsAt(ctx context.Context, rev string, paths []string) (map[string]string, error) {
	if len(paths) == 0 {
		return map[string]string{}, nil
	}
	out, err := r.run(ctx, nil, literal, append([]string{"ls-tree", "-z", "--full-tree", rev, "--"}, paths...)...)
	if err != nil {
		return nil, err
	}
	return parseLsTree(out), nil
}

// parseLsTree reads ls-tree -z output: "<mode> blob <id>\t<path>" records.
func parseLsTree(out string) map[string]string {
	files := map[string]string{}
	for _, rec := range splitZ(out) {
		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if ok && len(f) == 3 && f[1] == "blob" {
			files[p] = f[2]
		}
	}
	return files
}

// FileCommit is a commit that changed a file.
type FileCommit struct {
	Commit  string
	Time    time.Time
	Subject string
}

// ChangesSince lists the commits in since..head that changed file, newest
// first, at most max (0: all).
func (r *Repo) ChangesSince(ctx context.Context, since, head, file string, max int) ([]FileCommit, error) {
	args := []string{"log", "--no-show-signature", "--format=%H %ct %s", since + ".." + head}
	if max > 0 {
		args = append(args, "-n", strconv.Itoa(max))
	}
	out, err := r.run(ctx, nil, literal, append(args, "--", file)...)
	if err != nil {
		return nil, err
	}
	var cs []FileCommit
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.SplitN(l, " ", 3)
		if len(f) < 2 {
			continue
		}
		t, _ := strconv.ParseInt(f[1], 10, 64)
		c := FileCommit{Commit: f[0], Time: time.Unix(t, 0).UTC()}
		if len(f) == 3 {
			c.Subject = f[2]
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// CountChanges counts the commits in since..head that changed file.
func (r *Repo) CountChanges(ctx context.Context, since, head, file string) (int, error) {
	out, err := r.run(ctx, nil, literal, "rev-list", "--count", since+".."+head, "--", file)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}

// MaxUpstream bounds how many of HEAD's commits OffLine compares with
// unmerged ones by patch id (the commits HEAD gained since the oldest of
// them): past that, rebased or squashed copies are not looked for.
const MaxUpstream = 1000

// OffLine reports which of anchors are not on head's line of history: the
// commit is not here (in a shallow clone, where old commits are missing by
// design, a missing one is taken to be on the line), or it is not an
// ancestor of head and no commit of
// head's since then carries the same change. The same change is the
// same patch id (git patch-id --stable): a rebase-merge or cherry-pick
// copies each commit's patch, and a squash-merge carries, as one commit,
// the whole patch of a branch from where it left head's line to its tip
// (a local branch's tip, or the last anchor on it).
//
// pids holds patch ids already known (by commit, or "base..tip" for a
// branch's whole patch); the ones computed here are added to it.
func (r *Repo) OffLine(ctx context.Context, head string, anchors []string, pids map[string]string) (map[string]bool, error) {
	off := map[string]bool{}
	if len(anchors) == 0 {
		return off, nil
	}
	commits, err := r.commitsAmong(ctx, anchors)
	if err != nil {
		return nil, err
	}
	var present []string
	shallow := exists(r.commonDir + "/shallow")
	for _, a := range anchors {
		switch {
		case commits[a]:
			present = append(present, a)
		case !shallow:
			off[a] = true
		}
	}
	if head == "" || len(present) == 0 {
		for _, a := range present {
			off[a] = true
		}
		return off, nil
	}
	// Every commit an anchor or a local branch reaches that head does not:
	// the unmerged part of history, with parents and commit times.
	out, err := r.run(ctx, []byte(strings.Join(present, "\n")+"\n^"+head+"\n"), nil, "rev-list", "--parents", "--timestamp", "--branches", "--stdin")
	if err != nil {
		return nil, err
	}
	g := parseGraph(out)
	var unmerged []string
	oldest := int64(-1)
	for _, a := range present {
		if t, ok := g.time[a]; ok {
			unmerged = append(unmerged, a)
			off[a] = true
			if oldest < 0 || t < oldest {
				oldest = t
			}
		}
	}
	if len(unmerged) == 0 {
		return off, nil
	}
	// head's commits since the oldest unmerged one: where a copy would be.
	args := []string{"rev-list", "--no-merges", "--max-count=" + strconv.Itoa(MaxUpstream), "--since=" + strconv.FormatInt(oldest, 10), head, "--not"}
	up, err := r.run(ctx, nil, nil, append(args, unmerged...)...)
	if err != nil {
		return nil, err
	}
	upstream := strings.Fields(up)
	if len(upstream) == 0 {
		return off, nil
	}
	if err := r.dropLanded(ctx, g, unmerged, upstream, pids, off); err != nil {
		return nil, err
	}
	return off, nil
}

// dropLanded takes out of off the unmerged anchors whose change landed
// upstream as a copy: their own patch, or their branch's whole patch
// (from where it left head's line to its tip), is the patch of one of the
// upstream commits.
func (r *Repo) dropLanded(ctx context.Context, g graph, unmerged, upstream []string, pids map[string]string, off map[string]bool) error {
	// The patches to compare: each unmerged anchor's and each upstream
	// commit's own, and each branch's whole one.
	tips := g.ranges()
	var singles, ranges []string
	for _, c := range append(append([]string(nil), unmerged...), upstream...) {
		if _, ok := pids[c]; !ok {
			singles = append(singles, c)
		}
	}
	for tip, base := range tips {
		if _, ok := pids[base+".."+tip]; !ok {
			ranges = append(ranges, tip+" "+base)
		}
	}
	sort.Strings(ranges)
	if err := r.patchIDs(ctx, singles, "", pids); err != nil {
		return err
	}
	if err := r.patchIDs(ctx, ranges, "range", pids); err != nil {
		return err
	}
	landed := map[string]bool{}
	for _, c := range upstream {
		if p := pids[c]; p != "" {
			landed[p] = true
		}
	}
	for _, a := range unmerged {
		if p := pids[a]; p != "" && landed[p] {
			delete(off, a)
		}
	}
	for tip, base := range tips {
		if p := pids[base+".."+tip]; p != "" && landed[p] {
			for _, a := range g.below(tip) {
				delete(off, a)
			}
		}
	}
	return nil
}

// commitsAmong is the set of ids that name commits here.
func (r *Repo) commitsAmong(ctx context.Context, ids []string) (map[string]bool, error) {
	out, err := r.run(ctx, []byte(strings.Join(ids, "\n")+"\n"), nil, "cat-file", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		return nil, err
	}
	ok := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[1] == "commit" {
			ok[f[0]] = true
		}
	}
	return ok, nil
}

// patchIDs adds to pids the patch id of each line of diff-tree input:
// "<commit>" (its own change) or, for kind "range", "<tip> <base>" (the
// change from base to tip, keyed "base..tip"). A change without a patch
// (a merge, an empty commit) gets "".
func (r *Repo) patchIDs(ctx context.Context, lines []string, kind string, pids map[string]string) error {
	if len(lines) == 0 {
		return nil
	}
	diff, err := r.run(ctx, []byte(strings.Join(lines, "\n")+"\n"), nil, "diff-tree", "-p", "--no-renames", "--no-color", "--no-ext-diff", "--stdin")
	if err != nil {
		return err
	}
	out, err := r.run(ctx, []byte(diff), nil, "patch-id", "--stable")
	if err != nil {
		return err
	}
	got := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			got[f[1]] = f[0]
		}
	}
	for _, l := range lines {
		c, base, _ := strings.Cut(l, " ")
		key := c
		if kind == "range" {
			key = base + ".." + c
		}
		pids[key] = got[c]
	}
	return nil
}

// graph is the unmerged part of history: each commit's parents and time.
type graph struct {
	parents map[string][]string
	time    map[string]int64
}

// parseGraph reads rev-list --parents --timestamp output.
func parseGraph(out string) graph {
	g := graph{parents: map[string][]string{}, time: map[string]int64{}}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		t, _ := strconv.ParseInt(f[0], 10, 64)
		g.time[f[1]] = t
		g.parents[f[1]] = f[2:]
	}
	return g
}

// ranges maps each tip of the unmerged history (a commit no other
// unmerged commit has as a parent) to the one commit of head's line it
// left from; a tip that left from several (it merged head's line in) has
// no single patch and is left out.
func (g graph) ranges() map[string]string {
	child := map[string]bool{}
	for _, ps := range g.parents {
		for _, p := range ps {
			child[p] = true
		}
	}
	out := map[string]string{}
	for c := range g.parents {
		if child[c] {
			continue
		}
		bases := map[string]bool{}
		for _, u := range g.below(c) {
			for _, p := range g.parents[u] {
				if _, in := g.parents[p]; !in {
					bases[p] = true
				}
			}
		}
		if len(bases) == 1 {
			for b := range bases {
				out[c] = b
			}
		}
	}
	return out
}

// below is tip and every unmerged commit it reaches.
func (g graph) below(tip string) []string {
	seen := map[string]bool{tip: true}
	stack, out := []string{tip}, []string{}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, c)
		for _, p := range g.parents[c] {
			if _, in := g.parents[p]; in && !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return out
}

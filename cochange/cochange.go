// Package cochange mines "files that change together" from a stream of
// commits and recommends, for the files being changed now, the files that
// usually change with them. It is pure: commits in, rankings out.
//
// Several recommenders share one model so they can be compared on the same
// history (see internal/eval/cochange): plain pair counts, code-maat's degree,
// ROSE-style association rules (Zimmermann et al., ICSE 2004), and the
// default, a recency- and size-weighted confidence.
package cochange

import (
	"cmp"
	"math"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
)

// Commit is one change set.
type Commit struct {
	ID    string
	Time  time.Time
	Files []string
	Gone  []string // files of Files the commit deleted: never suggested again unless they come back
	// Renames are files the commit renamed (to a name in Files): their
	// history moves to the new name before the commit is learned.
	Renames []Rename
}

// Rename is a file moved from one name to another.
type Rename struct{ From, To string }

// Method names a recommender.
type Method string

// Recommenders.
const (
	// Count ranks by the number of past commits shared with the query files.
	Count Method = "count"
	// Degree is code-maat's coupling degree: shared commits over the mean
	// number of revisions of the two files, summed over query files.
	Degree Method = "degree"
	// Rose ranks by the confidence of the association rule Q ⇒ y (commits
	// holding Q and y over commits holding Q), support breaking ties; when
	// no past commit holds all of Q it falls back to the best single-file
	// rule q ⇒ y.
	Rose Method = "rose"
	// Weighted sums, over query files q, the confidence of q ⇒ y where each
	// past commit counts with a weight that decays with its age and with its
	// size (a 2-file commit says more about its pair than a 20-file one),
	// plus small boosts for pairs that changed together in the last few
	// commits (work in progress), for files changed lately and for files
	// sharing q's name stem (x.go, x_test.go). Files with no co-change
	// evidence (the query's stem twins, recently changed files of its
	// directory) follow below every file with evidence.
	Weighted Method = "weighted"
)

// Methods lists every recommender, the default first.
var Methods = []Method{Weighted, Rose, Count, Degree}

// DefaultMaxFiles is the largest commit used for pairs: bigger ones are
// sweeping changes (reformatting, renames, vendoring) that couple
// everything with everything. 20 is the seed's cap; on hugo's history it
// scores as 30 does (rolling navigation MRR@10 0.668 against 0.670).
const DefaultMaxFiles = 20

// Options tune a Model. Zero values take the defaults.
type Options struct {
	MaxFiles int           // commits touching more files are ignored (default 20)
	HalfLife time.Duration // recency half-life for Weighted (default 365 days)
	SizeExp  float64       // Weighted: a commit of n files weighs 1/(n-1)^SizeExp (default 0.5)
	SameDir  float64       // Weighted: a partner in the query file's directory counts (1+SameDir) times (default 1; <0: off)
}

type pair struct {
	count int
	seq   int32   // the last learned commit holding both
	w     float64 // Σ recency·size weight, scaled by exp(t/τ) (see Model.scale)
	last  int64   // unix seconds of the last commit holding both
}

type fileStat struct {
	gone     bool  // deleted by the last commit that touched it
	seq      int32 // the last learned commit holding the file
	count    int
	w        float64
	last     int64
	commits  []int32 // indexes of the learned commits holding the file (ROSE)
	partners map[int32]*pair
	// raw holds partners as a snapshot encoded them, until first use:
	// loading a model decodes only the files a query reaches.
	raw []byte
}

// Model holds co-change statistics.
type Model struct {
	opt     Options
	ids     map[string]int32
	names   []string
	dirs    map[string][]int32 // files by directory, for files with no history
	stems   map[string][]int32 // files by name stem (see stem)
	files   []*fileStat
	commits int32
	t0      int64 // time origin for the weights, so exp() stays in range
	tau     float64
}

// New returns an empty model.
func New(opt Options) *Model {
	if opt.MaxFiles <= 0 {
		opt.MaxFiles = DefaultMaxFiles
	}
	if opt.HalfLife <= 0 {
		opt.HalfLife = 365 * 24 * time.Hour
	}
	if opt.SizeExp == 0 {
		opt.SizeExp = 0.5
	}
	if opt.SameDir == 0 {
		opt.SameDir = 1
	}
	return &Model{opt: opt, ids: map[string]int32{}, dirs: map[string][]int32{}, stems: map[string][]int32{}, t0: math.MinInt64, tau: opt.HalfLife.Seconds() / math.Ln2}
}

// MaxFiles is the largest commit the model learns pairs from.
func (m *Model) MaxFiles() int { return m.opt.MaxFiles }

// Commits is the number of commits learned.
func (m *Model) Commits() int { return int(m.commits) }

func (m *Model) id(name string, create bool) (int32, bool) {
	if id, ok := m.ids[name]; ok {
		return id, true
	}
	if !create {
		return 0, false
	}
	id := int32(len(m.names))
	m.ids[name] = id
	m.names = append(m.names, name)
	m.files = append(m.files, &fileStat{partners: map[int32]*pair{}})
	d := path.Dir(name)
	m.dirs[d] = append(m.dirs[d], id)
	st := stem(name)
	m.stems[st] = append(m.stems[st], id)
	return id, true
}

// weight of a commit at time t (unix seconds) and size n, scaled by
// exp((t-t0)/τ); scores divide by the same scale, so only ratios matter.
func (m *Model) weight(t int64, n int) float64 {
	if m.t0 == math.MinInt64 {
		m.t0 = t
	}
	return math.Exp(float64(t-m.t0)/m.tau) / math.Pow(float64(max(n-1, 1)), m.opt.SizeExp)
}

// Learn adds a commit, after following its renames. Commits with no file
// or more than MaxFiles files add no pairs; it reports whether c added
// them.
func (m *Model) Learn(c Commit) bool {
	for _, r := range c.Renames {
		m.Rename(r.From, r.To)
	}
	defer m.markGone(c)
	files := dedupe(c.Files)
	if len(files) == 0 || len(files) > m.opt.MaxFiles {
		return false
	}
	t := c.Time.Unix()
	w := m.weight(t, len(files))
	idx := m.commits
	m.commits++
	ids := make([]int32, len(files))
	for i, f := range files {
		ids[i], _ = m.id(f, true)
		fs := m.files[ids[i]]
		fs.count++
		fs.w += w
		fs.last = max(fs.last, t)
		fs.commits = append(fs.commits, idx)
		fs.seq = idx
	}
	for _, a := range ids {
		partners := m.partners(a)
		for _, b := range ids {
			if a == b {
				continue
			}
			p := partners[b]
			if p == nil {
				p = &pair{}
				partners[b] = p
			}
			p.count++
			p.seq = idx
			p.w += w
			p.last = max(p.last, t)
		}
	}
	return true
}

// markGone records which of c's files exist after it.
func (m *Model) markGone(c Commit) {
	for _, f := range c.Files {
		if id, ok := m.id(f, false); ok {
			m.files[id].gone = false
		}
	}
	for _, f := range c.Gone {
		if id, ok := m.id(f, false); ok {
			m.files[id].gone = true
		}
	}
}

// Rename moves a file's history to its new name (a rename in git), merging
// it with any history the new name already has.
func (m *Model) Rename(from, to string) {
	fid, ok := m.id(from, false)
	if !ok || from == to {
		return
	}
	tid, _ := m.id(to, true)
	src, dst := m.files[fid], m.files[tid]
	dst.gone = false
	dst.count += src.count
	dst.w += src.w
	dst.last = max(dst.last, src.last)
	dst.seq = max(dst.seq, src.seq)
	dst.commits = mergeSorted(dst.commits, src.commits)
	dstPartners := m.partners(tid)
	for other, p := range m.partners(fid) {
		if other == tid {
			continue
		}
		q := dstPartners[other]
		if q == nil {
			q = &pair{}
			dstPartners[other] = q
		}
		q.count += p.count
		q.w += p.w
		q.last = max(q.last, p.last)
		q.seq = max(q.seq, p.seq)
		// the partner's view of the pair moves too
		op := m.partners(other)
		if back := op[fid]; back != nil {
			if fwd := op[tid]; fwd != nil {
				fwd.count += back.count
				fwd.w += back.w
				fwd.last = max(fwd.last, back.last)
				fwd.seq = max(fwd.seq, back.seq)
			} else {
				op[tid] = back
			}
			delete(op, fid)
		}
	}
	delete(m.ids, from)
	m.files[fid] = &fileStat{partners: map[int32]*pair{}}
}

// Suggestion is a file recommended for a query.
type Suggestion struct {
	File       string    `json:"file"`
	Score      float64   `json:"score"`
	Count      int       `json:"count"`      // commits shared with the query files (max over them)
	Confidence float64   `json:"confidence"` // best count(q,y)/count(q) over query files q
	Last       time.Time `json:"last_seen"`
}

// candidate is a file being ranked for a query.
type candidate struct {
	score, tie float64
	count      int
	conf       float64
	last       int64
	fallback   bool // no co-change evidence: ranked below every file with some
}

// Suggest ranks up to n files (not in query) that changed with the query
// files, by method, as of now (which only Weighted uses).
func (m *Model) Suggest(query []string, method Method, n int) []Suggestion {
	query = dedupe(query)
	q := make([]int32, 0, len(query))
	inQuery := map[int32]bool{}
	for _, f := range query {
		if id, ok := m.id(f, false); ok {
			inQuery[id] = true
			if m.files[id].count > 0 {
				q = append(q, id)
			}
		}
	}
	cands := m.evidence(q, inQuery, method)
	if method == Weighted {
		stems := map[string]bool{}
		for _, f := range query {
			stems[stem(f)] = true
		}
		for b, c := range cands {
			c.score += fileRecentBoost * m.recency(m.files[b].seq, recentSpan)
			if stems[stem(m.names[b])] {
				c.score += stemBoost
			}
		}
		if n <= 0 && len(cands) == 0 || n > 0 && len(cands) < n {
			m.addFallbacks(query, stems, inQuery, cands)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	if method == Rose && len(q) > 1 {
		m.roseExact(q, func(b int32, conf float64, support int) {
			if c := cands[b]; c != nil {
				c.score, c.tie = 1+conf, float64(support) // exact rules outrank fallbacks
			}
		})
	}
	return m.best(cands, n)
}

// evidence scores, by method, the files that changed with the query files
// q (files in the query and deleted files left out).
func (m *Model) evidence(q []int32, inQuery map[int32]bool, method Method) map[int32]*candidate {
	size := 0
	for _, a := range q {
		size += len(m.partners(a))
	}
	cands := make(map[int32]*candidate, size)
	for _, a := range q {
		fa := m.files[a]
		for b, p := range m.partners(a) {
			if inQuery[b] || m.files[b].gone {
				continue
			}
			c := cands[b]
			if c == nil {
				c = &candidate{}
				cands[b] = c
			}
			conf := float64(p.count) / float64(fa.count)
			c.count = max(c.count, p.count)
			c.conf = math.Max(c.conf, conf)
			c.last = max(c.last, p.last)
			switch method {
			case Count:
				c.score += float64(p.count)
			case Degree:
				c.score += float64(p.count) / (float64(fa.count+m.files[b].count) / 2)
			case Rose:
				c.score = c.conf
				c.tie = float64(c.count)
			default: // Weighted
				sc := p.w / fa.w
				if m.opt.SameDir > 0 && path.Dir(m.names[a]) == path.Dir(m.names[b]) {
					sc *= 1 + m.opt.SameDir
				}
				c.score += sc + pairRecentBoost*m.recency(p.seq, recentSpan)
				c.tie = float64(p.last)
			}
		}
	}
	return cands
}

// addFallbacks adds, when there is too little evidence, the query's stem
// twins, then the recently changed files of its directories (new files
// have only these), ranked below every file with evidence.
func (m *Model) addFallbacks(query []string, stems map[string]bool, inQuery map[int32]bool, cands map[int32]*candidate) {
	fallback := func(b int32, score float64) {
		if inQuery[b] || m.files[b].count == 0 || m.files[b].gone {
			return
		}
		c := cands[b]
		if c == nil {
			c = &candidate{fallback: true, last: m.files[b].last}
			cands[b] = c
		}
		if c.fallback {
			c.score = math.Max(c.score, score)
		}
	}
	for st := range stems {
		for _, b := range m.stems[st] {
			fallback(b, stemBoost+fileRecentBoost*m.recency(m.files[b].seq, recentSpan))
		}
	}
	for _, f := range query {
		for _, b := range m.dirs[path.Dir(f)] {
			if r := m.recency(m.files[b].seq, dirRecentSpan); r > 1e-3 {
				fallback(b, fileRecentBoost*r)
			}
		}
	}
}

// ranked is a suggestion with what orders it.
type ranked struct {
	Suggestion
	tie      float64
	fallback bool
}

// betterRanked orders evidence before fallbacks, then by score, tie and
// name.
func betterRanked(a, b ranked) int {
	switch {
	case a.fallback != b.fallback:
		if b.fallback {
			return -1
		}
		return 1
	case a.Score != b.Score:
		return cmp.Compare(b.Score, a.Score)
	case a.tie != b.tie:
		return cmp.Compare(b.tie, a.tie)
	}
	return strings.Compare(a.File, b.File)
}

// best is the n best candidates (n <= 0: all), in order.
func (m *Model) best(cands map[int32]*candidate, n int) []Suggestion {
	out := make([]ranked, 0, len(cands))
	for b, c := range cands {
		out = append(out, ranked{Suggestion{File: m.names[b], Score: c.score, Count: c.count, Confidence: c.conf, Last: time.Unix(c.last, 0).UTC()}, c.tie, c.fallback})
	}
	if n > 0 && len(out) > 4*n {
		out = topN(out, n, betterRanked)
	} else {
		slices.SortFunc(out, betterRanked)
	}
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	res := make([]Suggestion, len(out))
	for i, r := range out {
		res[i] = r.Suggestion
	}
	return res
}

// topN is the n first of list in cmp's order, sorted: one pass keeping
// the best n, cheaper than sorting every candidate of a popular file.
func topN[T any](list []T, n int, cmp func(a, b T) int) []T {
	best := make([]T, 0, n+1)
	for _, x := range list {
		if len(best) == n && cmp(x, best[n-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(best, x, cmp)
		best = slices.Insert(best, i, x)
		if len(best) > n {
			best = best[:n]
		}
	}
	return best
}

// Weighted's boosts, chosen on the 2024 commits of the hugo history (train
// before 2024, see internal/eval/cochange -until) and then measured on the
// later commits.
const (
	pairRecentBoost = 0.15 // × recency of the pair's last commit together
	fileRecentBoost = 0.08 // × recency of the candidate's last commit
	stemBoost       = 0.08 // candidate shares a query file's name stem
	recentSpan      = 10   // commits: recency = exp(-commits since / span)
	dirRecentSpan   = 50   // commits, for the directory fallback
)

// recency is exp(-(commits learned since commit seq)/span).
func (m *Model) recency(seq int32, span float64) float64 {
	return math.Exp(-float64(m.commits-1-seq) / span)
}

// stem is a file's base name without extension and test suffix, so that
// x.go, x_test.go and x.md share one.
func stem(name string) string {
	b := path.Base(name)
	b = strings.TrimSuffix(b, path.Ext(b))
	return strings.TrimSuffix(b, "_test")
}

// roseExact reports, for every file y in a commit holding all of q, the
// confidence and support of the rule q ⇒ y.
func (m *Model) roseExact(q []int32, emit func(y int32, conf float64, support int)) {
	lists := make([][]int32, len(q))
	for i, id := range q {
		lists[i] = m.files[id].commits
	}
	sort.Slice(lists, func(i, j int) bool { return len(lists[i]) < len(lists[j]) })
	common := lists[0]
	for _, l := range lists[1:] {
		common = intersect(common, l)
		if len(common) == 0 {
			return
		}
	}
	// Support of q ⇒ y: commits in common that also hold y.
	set := map[int32]bool{}
	for _, c := range common {
		set[c] = true
	}
	support := map[int32]int{}
	for b := range m.partners(q[0]) {
		for _, c := range m.files[b].commits {
			if set[c] {
				support[b]++
			}
		}
	}
	for b, s := range support {
		emit(b, float64(s)/float64(len(common)), s)
	}
}

// FileCommits is the number of learned commits that touched file.
func (m *Model) FileCommits(file string) int {
	if id, ok := m.id(file, false); ok {
		return m.files[id].count
	}
	return 0
}

func dedupe(files []string) []string {
	seen := make(map[string]bool, len(files))
	out := files[:0:0]
	for _, f := range files {
		if f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

func intersect(a, b []int32) []int32 {
	var out []int32
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

func mergeSorted(a, b []int32) []int32 {
	out := make([]int32, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

package web

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/cochange"
	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/memory"
)

// pageNames are the templates, each rendered inside layout.html.
var pageNames = []string{"timeline", "search", "entry", "rules", "code", "status", "error"}

func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

var funcs = template.FuncMap{
	"short":    app.ShortID,
	"author":   app.AuthorName,
	"line":     summary,
	"markdown": markdown,
	"sub":      app.SubscriptionOf,
	"time":     func(t time.Time) string { return t.Local().Format("2006-01-02 15:04") },
	"pct":      func(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) },
	"f3":       func(x float64) string { return fmt.Sprintf("%.3f", x) },
}

// layoutData is what layout.html needs besides the page's own data.
type layoutData struct {
	Title   string
	Project string
	Nav     string
	CSRF    string
	URL     string
	Done    string
	Page    any
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, v view) {
	var buf bytes.Buffer
	var project string
	s.sess.Do(r.Context(), func(svc *app.Service) error {
		project = svc.Project(r.Context())
		return nil
	})
	d := layoutData{Title: v.title, Project: project, Nav: v.name, CSRF: s.csrf, URL: r.URL.RequestURI(), Done: r.URL.Query().Get("done"), Page: v.data}
	if err := s.pages[v.name].Execute(&buf, d); err != nil {
		http.Error(w, "render: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	buf.WriteTo(w)
}

// summary is text on one line for a listing: Markdown heading marks
// dropped, lines joined, cut at n characters.
func summary(text string, n int) string {
	var words []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#"))
		if l != "" {
			words = append(words, l)
		}
	}
	return app.FirstLine(strings.Join(words, " · "), n)
}

func badRequest(err error) error { return httpError{http.StatusBadRequest, err} }

// Row is an entry as the pages list it.
type Row struct {
	app.Entry
	Age    string
	Origin string
}

func (s call) rows(r *http.Request, es []app.Entry) []Row {
	me := s.svc.Identity(r.Context())
	now := s.svc.Now()
	out := make([]Row, len(es))
	for i, e := range es {
		out[i] = Row{Entry: e, Age: app.Age(now, e.Created), Origin: app.Origin(e, me)}
	}
	return out
}

// pageSize is the timeline's page; ?n= asks for another, up to maxPage.
const pageSize, maxPage = 50, 500

type timelineData struct {
	Rows    []Row
	Form    url.Values
	Types   []string
	Tiers   []string
	Next    string // the next page's URL, "" on the last
	Invalid string
}

func (s call) timeline(r *http.Request) (view, error) {
	q := r.URL.Query()
	spec := app.FilterSpec{Tags: nonEmpty(q["tag"]), Tier: q.Get("tier"), Author: q.Get("author"), Since: q.Get("since")}
	for _, t := range q["type"] {
		if t != "" {
			spec.Types = append(spec.Types, t)
		}
	}
	switch q.Get("archived") {
	case "include":
		spec.IncludeArchived = true
	case "only":
		spec.OnlyArchived = true
	}
	d := timelineData{Form: q, Types: app.EntryTypes(), Tiers: app.Tiers()}
	f, err := s.svc.Filter(spec)
	if err != nil {
		return view{}, badRequest(err)
	}
	n := pageSize
	if v, err := strconv.Atoi(q.Get("n")); err == nil && v > 0 {
		n = min(v, maxPage)
	}
	if b := q.Get("before"); b != "" {
		t, err := time.Parse(time.RFC3339Nano, b)
		if err != nil {
			return view{}, badRequest(fmt.Errorf("before=%q: not a time", b))
		}
		f.Until = t.Add(-time.Nanosecond)
	}
	f.Limit = n + 1
	es, err := s.svc.Recall().List(r.Context(), f)
	if err != nil {
		return view{}, err
	}
	if len(es) > n {
		es = es[:n]
		next := url.Values{}
		for k, v := range q {
			next[k] = v
		}
		next.Set("before", es[n-1].Created.UTC().Format(time.RFC3339Nano))
		d.Next = "/?" + next.Encode()
	}
	d.Rows = s.rows(r, es)
	return view{name: "timeline", title: "Timeline", data: d}, nil
}

func nonEmpty(xs []string) []string {
	var out []string
	for _, x := range xs {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

type hitRow struct {
	Row Row
	Hit app.Hit
}

type searchData struct {
	Query    string
	Explain  bool
	Mode     string
	Info     app.SearchInfo
	Hits     []hitRow
	Searched bool
}

func (s call) search(r *http.Request) (view, error) {
	q := r.URL.Query()
	d := searchData{Query: strings.TrimSpace(q.Get("q")), Explain: q.Get("explain") != "", Mode: q.Get("mode")}
	if d.Query == "" {
		return view{name: "search", title: "Search", data: d}, nil
	}
	found, info, err := s.svc.Recall().Search(r.Context(), app.SearchRequest{Query: d.Query, Filter: app.Filter{Limit: 30}, Mode: d.Mode})
	if err != nil {
		return view{}, err
	}
	hits := app.Hits(found)
	d.Searched, d.Info = true, info.SearchInfo
	for i, rw := range s.rows(r, hitEntries(hits)) {
		d.Hits = append(d.Hits, hitRow{Row: rw, Hit: hits[i]})
	}
	return view{name: "search", title: "Search: " + d.Query, data: d}, nil
}

type entryData struct {
	Row
	Ops       []opRow
	Links     []Row
	Backlinks []Row
	Diffs     []editView // not Edits: that is the count, from Row
}

type opRow struct {
	memory.Op
	What string
}

type editView struct {
	app.Edit
	Lines []diffLine
}

func (s call) entry(r *http.Request) (view, error) {
	ctx := r.Context()
	rel, err := s.svc.Recall().Related(ctx, r.PathValue("id"))
	if err != nil {
		return view{}, err
	}
	edits, err := s.svc.Recall().Edits(ctx, rel.ID)
	if err != nil {
		return view{}, err
	}
	d := entryData{Row: s.rows(r, []app.Entry{rel.Entry})[0], Links: s.rows(r, rel.Links), Backlinks: s.rows(r, rel.Backlinks)}
	ops := append([]memory.Op(nil), rel.Ops...)
	memory.SortOps(ops)
	for _, o := range ops {
		d.Ops = append(d.Ops, opRow{Op: o, What: app.DescribeOp(o)})
	}
	for _, e := range edits {
		d.Diffs = append(d.Diffs, editView{Edit: e, Lines: diffLines(e.Before, e.After)})
	}
	return view{name: "entry", title: app.FirstLine(rel.Content, 60), data: d}, nil
}

type pendingRow struct {
	Row       Row
	Conflicts []Row
}

type groupRow struct {
	ID    string
	Since string
	Rows  []Row
}

type rulesData struct {
	Pending       []pendingRow
	Rules         []Row
	Labels        map[string]string
	Patterns      []groupRow
	Consolidation []groupRow
	NoModel       string // why patterns and consolidation are not shown
}

func (s call) rules(r *http.Request) (view, error) {
	ctx := r.Context()
	ag, mem := s.svc.Agent(), s.svc.Memory()
	pending, err := ag.PendingRules(ctx)
	if err != nil {
		return view{}, err
	}
	rules, err := ag.Rules(ctx, 0)
	if err != nil {
		return view{}, err
	}
	d := rulesData{Labels: map[string]string{}}
	// Patterns and consolidation group entries by meaning: without the
	// model the page says so and shows the rest.
	patterns, err := mem.Patterns(ctx)
	if errors.Is(err, app.ErrNoModel) {
		d.NoModel = err.Error()
	} else if err != nil {
		return view{}, err
	}
	var cons []app.Group
	if d.NoModel == "" {
		if cons, err = mem.Consolidation(ctx); err != nil {
			return view{}, err
		}
	}
	for _, p := range pending {
		pr := pendingRow{Row: s.rows(r, []app.Entry{p.Entry})[0]}
		for _, c := range p.Conflicts {
			pr.Conflicts = append(pr.Conflicts, s.rows(r, []app.Entry{c.Entry})[0])
		}
		d.Pending = append(d.Pending, pr)
	}
	es := make([]app.Entry, len(rules))
	for i, ru := range rules {
		es[i] = ru.Entry
		d.Labels[ru.ID] = ru.Label
	}
	d.Rules = s.rows(r, es)
	d.Patterns = s.groups(r, patterns)
	d.Consolidation = s.groups(r, cons)
	return view{name: "rules", title: "Rules and patterns", data: d}, nil
}

func (s call) groups(r *http.Request, gs []app.Group) []groupRow {
	out := make([]groupRow, len(gs))
	for i, g := range gs {
		out[i] = groupRow{ID: g.ID, Since: app.Age(s.svc.Now(), g.Since), Rows: s.rows(r, g.Entries)}
	}
	return out
}

func (s call) acceptRule(r *http.Request) (string, error) {
	ru, err := s.svc.Agent().AcceptRule(r.Context(), r.PostForm.Get("id"), r.PostForm.Get("label"))
	if err != nil {
		return "", err
	}
	return "accepted as rule " + app.ShortID(ru.ID), nil
}

func (s call) dismissRule(r *http.Request) (string, error) {
	if _, err := s.svc.Agent().DismissRule(r.Context(), r.PostForm.Get("id")); err != nil {
		return "", err
	}
	return "dismissed " + app.ShortID(r.PostForm.Get("id")), nil
}

func (s call) resolvePattern(r *http.Request) (string, error) {
	g, err := s.svc.Memory().ResolvePattern(r.Context(), r.PostForm.Get("id"))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("resolved the pattern of %d issues", len(g.Entries)), nil
}

type codeData struct {
	File    string
	Commits int
	Graph   *graph
	Memory  []Row
	History []Row
	Problem string
}

func (s call) code(r *http.Request) (view, error) {
	ctx := r.Context()
	d := codeData{File: strings.TrimSpace(r.URL.Query().Get("file"))}
	if d.File == "" {
		return view{name: "code", title: "Code", data: d}, nil
	}
	sugg, commits, err := s.svc.Code().Cochanges(ctx, d.File, cochange.Weighted, 12, nil)
	if errors.Is(err, app.ErrNoCommits) {
		d.Problem = err.Error()
	} else if err != nil {
		return view{}, err
	}
	d.Commits = commits
	if len(sugg) > 0 {
		d.Graph = layout(d.File, sugg)
	}
	// The memory that names the file, as the session start finds it; the
	// commits that mention it, by its path and name.
	mem, err := s.svc.Recall().MemoryAbout(ctx, d.File, nil, 10)
	if err != nil {
		return view{}, err
	}
	q := d.File + " " + path.Base(d.File)
	hist, _, err := s.svc.Recall().Search(ctx, app.SearchRequest{Query: q, Filter: app.Filter{Limit: 10, Types: []memory.Type{memory.TypeGitCommit}}, Mode: "bm25"})
	if err != nil && !errors.Is(err, app.ErrNoWords) {
		return view{}, err
	}
	d.Memory, d.History = s.rows(r, hitEntries(mem)), s.rows(r, hitEntries(app.Hits(hist)))
	return view{name: "code", title: d.File, data: d}, nil
}

func hitEntries(hs []app.Hit) []app.Entry {
	out := make([]app.Entry, len(hs))
	for i, h := range hs {
		out[i] = h.Entry
	}
	return out
}

// graph is a co-change neighbourhood laid out for SVG: the file in the
// middle, the files that change with it around it, nearer and joined by a
// thicker line the more often they do.
type graph struct {
	W, H   int
	Center node
	Nodes  []node
}

type node struct {
	X, Y, R float64
	File    string
	Label   string
	Width   float64 // of the edge to the centre
	Count   int
	Conf    float64
}

func layout(file string, sugg []cochange.Suggestion) *graph {
	g := &graph{W: 760, H: 520}
	cx, cy := float64(g.W)/2, float64(g.H)/2
	g.Center = node{X: cx, Y: cy, R: 16, File: file, Label: path.Base(file)}
	maxCount := 1
	for _, s := range sugg {
		maxCount = max(maxCount, s.Count)
	}
	sort.SliceStable(sugg, func(i, j int) bool { return sugg[i].Count > sugg[j].Count })
	for i, s := range sugg {
		a := 2*math.Pi*float64(i)/float64(len(sugg)) - math.Pi/2
		w := float64(s.Count) / float64(maxCount)
		rad := 230 - 90*w
		g.Nodes = append(g.Nodes, node{X: cx + rad*math.Cos(a)*1.3, Y: cy + rad*math.Sin(a)*0.85, R: 6 + 6*w,
			File: s.File, Label: path.Base(s.File), Width: 1 + 7*w, Count: s.Count, Conf: s.Confidence})
	}
	return g
}

type statusData struct {
	St     app.Status
	ByType []bar
	ByTier []bar
	Total  int
}

type bar struct {
	Label string
	N     int
	W     float64 // width, percent of the largest
}

func bars(m map[string]int, order []string) []bar {
	mx := 1
	for _, n := range m {
		mx = max(mx, n)
	}
	var out []bar
	for _, k := range order {
		if n, ok := m[k]; ok {
			out = append(out, bar{Label: k, N: n, W: 100 * float64(n) / float64(mx)})
		}
	}
	for k, n := range m {
		if !slices.Contains(order, k) {
			out = append(out, bar{Label: k, N: n, W: 100 * float64(n) / float64(mx)})
		}
	}
	return out
}

func (s call) status(r *http.Request) (view, error) {
	st, err := s.svc.Status(r.Context())
	if err != nil {
		return view{}, err
	}
	d := statusData{St: st, Total: st.Stats.Total, ByType: bars(st.Stats.ByType, app.EntryTypes()), ByTier: bars(st.Stats.ByTier, app.Tiers())}
	return view{name: "status", title: "Status", data: d}, nil
}

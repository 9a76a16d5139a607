package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/embed"
	"github.com/git-synaptic/git-synaptic/timeexpr"
)

// SearchInfo says how a search was ranked.
type SearchInfo struct {
	Mode    SearchMode `json:"mode"`
	Model   string     `json:"model,omitempty"`
	Backend string     `json:"backend,omitempty"`
	// Pending entries had no vector yet (found by BM25 only).
	Pending int `json:"pending,omitempty"`
	// Fallback explains why a semantic search ran lexically.
	Fallback string `json:"fallback,omitempty"`
	// Time says how the query's time expression was read ("in July
	// 2023" → 2023-07-01 – 2023-07-31); entries of that time rank higher.
	Time string `json:"time,omitempty"`
}

// Embedder turns text into vectors for semantic search: the installed
// model (embed.Model), or a deterministic fake in tests.
type Embedder interface {
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dim is the length of every vector.
	Dim() int
	// ModelID names the model and its exact weights; vectors of different
	// ids are never compared.
	ModelID() string
	// Backend names the runtime: a search embeds fewer entries in passing
	// with the slow pure-Go one ("go") than with others ("ort").
	Backend() string
}

// embedder loads the model once per Service (the MCP server keeps it).
func (s *core) embedder() (Embedder, error) { return s.model.get() }

// ModelStatus describes the embedding model a search would use.
type ModelStatus struct {
	Name     string `json:"name"`
	ID       string `json:"id,omitempty"`
	Backend  string `json:"backend,omitempty"`
	LoadMS   int64  `json:"load_ms,omitempty"`
	Embedded int    `json:"embedded"`
	Entries  int    `json:"entries"`
	Error    string `json:"error,omitempty"`
}

// VectorStatus loads the model and counts the entries with vectors.
func (s *Recall) VectorStatus(ctx context.Context) (ModelStatus, error) {
	st := ModelStatus{Name: s.model.name}
	m, err := s.embedder()
	if err != nil {
		st.Error = err.Error()
		return st, nil
	}
	st.ID, st.Backend = m.ModelID(), m.Backend()
	if l, ok := m.(interface{ LoadTime() time.Duration }); ok {
		st.LoadMS = l.LoadTime().Milliseconds()
	}
	err = s.withCache(ctx, func(c *cache.Cache) error {
		if err := c.UseModel(ctx, m.ModelID(), m.Dim()); err != nil {
			return err
		}
		// After a reindex the vectors wait in the vector store until a
		// search takes them back; count them as they are.
		if pending, err := c.HasPending(ctx); err != nil {
			return err
		} else if pending {
			if _, err := c.RestoreVectors(ctx, nil); err != nil {
				return err
			}
		}
		var err error
		st.Embedded, st.Entries, err = c.VectorCounts(ctx)
		return err
	})
	return st, err
}

// embedStore embeds the pending texts and stores their vectors.
func embedStore(ctx context.Context, c *cache.Cache, m Embedder, pending []cache.PendingText) error {
	texts := make([]string, len(pending))
	for i, p := range pending {
		texts[i] = p.Text
	}
	vecs, err := m.Embed(ctx, texts)
	if err != nil {
		return err
	}
	return c.StoreVectors(ctx, pending, vecs)
}

// restorePending takes back the stored vectors of the total entries
// waiting, saying so, and returns how many wait still.
func (s *core) restorePending(ctx context.Context, c *cache.Cache, total int) (int, error) {
	s.warnf("taking back the stored vectors of %d entries that wait for one, once (about a minute a million)", total)
	start := time.Now()
	restored, err := c.RestoreVectors(ctx, nil) // said before and after: "indexing memory" would mislabel it
	if err != nil {
		return 0, err
	}
	left, err := c.PendingCount(ctx)
	if err != nil {
		return 0, err
	}
	s.warnf("took back %d stored vectors in %s; %d entries left to embed", restored, time.Since(start).Round(time.Second), left)
	return left, nil
}

// restoreAtOnce is how many entries waiting for a vector make
// embedPending take the store's vectors back in one pass first.
var restoreAtOnce = 50_000

// embedPending embeds up to budget entries that have no vector (all when
// budget < 0) and returns how many are left.
func (s *core) embedPending(ctx context.Context, c *cache.Cache, m Embedder, budget int, progress func(done, total int)) (left int, err error) {
	if err := c.UseModel(ctx, m.ModelID(), m.Dim()); err != nil {
		return 0, err
	}
	done := 0
	if pending, err := c.HasPending(ctx); err != nil || !pending {
		return 0, err // every entry has its vector: the common case
	}
	total, err := c.PendingCount(ctx)
	if err != nil {
		return 0, err
	}
	if total >= restoreAtOnce {
		// Most of them may have vectors in the store (a reindex killed as
		// it restored them): one pass over the store takes them back,
		// where the loop below looked each up (a million: 81 s, silent, in
		// the first search).
		stored, err := c.WaitingStored(ctx)
		if err != nil {
			return 0, err
		}
		if stored {
			if total, err = s.restorePending(ctx, c, total); err != nil {
				return 0, err
			}
		}
	}
	for budget < 0 || done < budget {
		n := 256
		if budget >= 0 {
			n = min(n, budget-done)
		}
		pending, reused, err := c.PendingVectors(ctx, n)
		if err != nil {
			return 0, err
		}
		done += reused
		if len(pending) == 0 {
			break
		}
		if err := embedStore(ctx, c, m, pending); err != nil {
			return 0, err
		}
		done += len(pending)
		if progress != nil {
			progress(min(done, total), total)
		}
	}
	return c.PendingCount(ctx)
}

// Embed computes the vectors every entry is missing, with progress.
func (s *Recall) Embed(ctx context.Context, progress func(done, total int)) (ModelStatus, error) {
	m, err := s.embedder()
	if err != nil {
		return ModelStatus{Name: s.model.name}, err
	}
	err = s.withCache(ctx, func(c *cache.Cache) error {
		_, err := s.embedPending(ctx, c, m, -1, progress)
		return err
	})
	if err != nil {
		return ModelStatus{}, err
	}
	return s.VectorStatus(ctx)
}

// EmbedSome embeds up to n entries that have no vector and returns how
// many are left: the warm process's background work, a piece at a time.
func (s *Recall) EmbedSome(ctx context.Context, n int) (left int, err error) {
	m, err := s.embedder()
	if err != nil {
		return 0, err
	}
	err = s.withCache(ctx, func(c *cache.Cache) error {
		left, err = s.embedPending(ctx, c, m, n, nil)
		return err
	})
	return left, err
}

// LoadIndex loads the embedding model and reads the cache's vector index
// into memory, or what changed of it, as a search's vector lanes do
// first: at a million entries 0.5-1 s of the first prompt a warm process
// served, besides the model's load. The warm process does it between
// requests (after EmbedSome) and the MCP server a second after it starts,
// so that the first prompt or search after they start waits for neither.
// Without a model there is no index to read.
func (s *Recall) LoadIndex(ctx context.Context) error {
	m, err := s.embedder()
	if err != nil {
		return nil // BM25 alone
	}
	return s.withCache(ctx, func(c *cache.Cache) error {
		if err := c.UseModel(ctx, m.ModelID(), m.Dim()); err != nil {
			return err
		}
		return c.LoadIndex(ctx)
	})
}

// searchEmbedBudget bounds the entries a search (or an agent hook) embeds
// before it runs: a handful (about 40 ms with ONNX Runtime), so that a
// search after indexing thousands of commits still answers at once. The
// rest stay BM25-only until the warm process embeds them in the
// background, or 'git synaptic embed'. The pure-Go runtime is slower.
func searchEmbedBudget(backend string) int {
	if backend == "go" {
		return 4
	}
	return 16
}

// Scope is which memory a search reads.
type Scope string

// Search scopes.
const (
	ScopeProject Scope = "project" // this repository's memory, its subscriptions included
	ScopeAll     Scope = "all"     // that and every project in the user's project list
)

// Scopes are the search scopes, for front ends' help and schemas.
var Scopes = []Scope{ScopeProject, ScopeAll}

// SearchModes are the search modes ("auto" is the default), for front
// ends' help and schemas.
var SearchModes = []string{"auto", "hybrid", "vector", "bm25"}

// SearchRequest is a search as a person or an agent asks it.
type SearchRequest struct {
	Query  string
	Filter Filter
	// Mode is one of SearchModes ("" is auto): auto is hybrid when a model
	// is installed and BM25 (the lexical fallback, named as such in the
	// info) when not.
	Mode string
	// Scope is ScopeProject ("") or ScopeAll.
	Scope Scope
}

// Search runs req and returns its hits in rank order, each labelled with
// its project (Here for this repository's own), and what it searched.
//
// Every hit counts as a use of its entry for decay (once per session when
// there is one), since the user or agent who searched sees them all; it
// does not raise the entry's rank (rank.Priors counts reads, not hits).
func (s *Recall) Search(ctx context.Context, req SearchRequest) ([]ProjectHit, ProjectsInfo, error) {
	if req.Scope != "" && !slices.Contains(Scopes, req.Scope) {
		return nil, ProjectsInfo{}, Invalidf("unknown search scope %q (want project or all)", req.Scope)
	}
	hits, si, err := s.search(ctx, searchReq{query: req.Query, filter: req.Filter, mode: req.Mode, who: forReader})
	if err != nil {
		return nil, ProjectsInfo{SearchInfo: si}, err
	}
	out, info := labelHits(hits, s.project(ctx), homePath(s.repo), true), ProjectsInfo{SearchInfo: si, Searched: 1}
	if req.Scope != ScopeAll {
		return out, info, nil
	}
	return s.addProjects(ctx, req, out, info)
}

// Hits are the search results of ProjectHits, without their projects.
func Hits(found []ProjectHit) []Hit {
	out := make([]Hit, len(found))
	for i, h := range found {
		out[i] = h.Hit
	}
	return out
}

// searchFor says who a search's results are for.
type searchFor int

const (
	// forReader: a person or an agent reads the results (CLI, MCP, web):
	// each counts as a use, and issues carry their recurring pattern.
	forReader searchFor = iota
	// forHook: a hook scores more than it shows; it counts what it shows
	// itself and shows no pattern labels.
	forHook
)

// searchReq is one search: its text, filter and mode, who reads it, and
// the query's embedding if the caller started it early (nil: search
// starts it).
type searchReq struct {
	query  string
	filter Filter
	mode   string
	who    searchFor
	vector *queryVector
}

// search is Search of this project, for a reader or a hook.
func (s *core) search(ctx context.Context, req searchReq) ([]Hit, SearchInfo, error) {
	query, filter, who := req.query, req.filter, req.who
	info := SearchInfo{Mode: ModeBM25}
	m, err := s.searchModel(req.mode, &info)
	if err != nil {
		return nil, info, err
	}
	span := s.queryTime(query, filter)
	if span != nil {
		info.Time = span.String()
	}
	var hits []Hit
	err = s.withCache(ctx, func(c *cache.Cache) error {
		var err error
		v := s.view(ctx, c)
		f := v.filter(filter)
		sq := cache.SemanticQuery{Text: query, Mode: cache.Mode(info.Mode), Weights: !s.rawScores, Now: s.now(), TimeAnchor: s.queryAnchor(), Time: span,
			OffLine: v.demote(filter.Branches)}
		if m != nil {
			info.Model, info.Backend = m.ModelID(), m.Backend()
			// ONNX Runtime sessions run concurrently: embed the query while
			// SQLite does the rest (about 2 ms of a warm search). Whatever
			// path this closure leaves by, it waits for that embedding: the
			// model must not be closed under it.
			q := req.vector
			if q == nil {
				q = startQuery(ctx, m, query)
			}
			if q != nil {
				defer q.wait()
			}
			if info.Pending, err = s.embedPending(ctx, c, m, searchEmbedBudget(m.Backend()), nil); err != nil {
				return err
			}
			if q == nil {
				q = embedQuery(ctx, m, query, false)
			}
			sq.VectorFunc, sq.MinCosine = q.wait, minCosine(s.rawScores)
		}
		found, err := c.SemanticSearch(ctx, sq, f)
		hits = hitsOf(found)
		if err == nil {
			s.markHits(ctx, c, v, hits)
		}
		if err == nil && m != nil && who == forReader {
			s.annotatePatterns(ctx, c, hits) // patterns are found by meaning
		}
		if err == nil && who == forReader {
			// An archived entry found with --include-archived is looked at,
			// not used: counting it would revive it at the next pass.
			var ids []string
			for _, h := range hits {
				if !h.Archived && !h.Decayed {
					ids = append(ids, h.ID)
				}
			}
			s.noteUse(ctx, c, ids, s.sessionID(), false)
		}
		return err
	})
	return hits, info, err
}

// searchModel picks the model a search in mode uses (nil: BM25 alone) and
// sets info's mode, and its fallback when auto mode finds no model.
func (s *core) searchModel(mode string, info *SearchInfo) (Embedder, error) {
	var m Embedder
	switch mode {
	case "", "auto", "hybrid", "vector":
		var err error
		m, err = s.embedder()
		if err != nil {
			if mode == "hybrid" || mode == "vector" {
				return nil, fmt.Errorf("%s search needs an embedding model: %w", mode, err)
			}
			info.Fallback = "lexical search (BM25 only): " + err.Error()
			if errors.Is(err, embed.ErrNoModel) {
				info.Fallback = "lexical search (BM25 only): no embedding model installed; run 'git synaptic model install'"
			}
			m = nil
		}
		info.Mode = ModeHybrid
		if mode == "vector" {
			info.Mode = ModeVector
		}
		if m == nil {
			info.Mode = ModeBM25
		}
	case "bm25":
	default:
		return nil, Invalidf("unknown search mode %q (want auto, hybrid, vector or bm25)", mode)
	}
	return m, nil
}

// minCosine is the similarity below which a match found by the vectors
// alone is noise for USE-lite: unrelated sentences score about 0.1-0.4
// against each other, paraphrases 0.5-0.8.
func minCosine(raw bool) float64 {
	if raw {
		return 0
	}
	return 0.45
}

// queryVector is a query's embedding, computed in the background or not.
type queryVector struct {
	done chan struct{}
	v    []float32
	err  error
}

// startQuery starts embedding text with m beside the caller's work where
// the runtime allows it (ONNX Runtime); nil where it does not. The caller
// must wait for it before the model may close.
func startQuery(ctx context.Context, m Embedder, text string) *queryVector {
	if m.Backend() != "ort" {
		return nil
	}
	return embedQuery(ctx, m, text, true)
}

// embedQuery embeds text with m, in a goroutine when async; wait returns
// the vector once it is there.
func embedQuery(ctx context.Context, m Embedder, text string, async bool) *queryVector {
	q := &queryVector{done: make(chan struct{})}
	run := func() {
		defer close(q.done)
		vs, err := m.Embed(ctx, []string{text})
		if err == nil && len(vs) != 1 {
			err = fmt.Errorf("embedding model returned %d vectors for one query", len(vs))
		}
		if err != nil {
			q.err = err
			return
		}
		q.v = vs[0]
	}
	if async {
		go run()
	} else {
		run()
	}
	return q
}

// wait blocks until the embedding is done and returns it.
func (q *queryVector) wait() ([]float32, error) {
	<-q.done
	return q.v, q.err
}

// queryAnchor is the time relative times in a query are read against:
// Options.AsOf, else now.
func (s *core) queryAnchor() time.Time {
	if !s.per.AsOf.IsZero() {
		return s.per.AsOf
	}
	return s.now()
}

// queryTime is the time a query names, read against queryAnchor; nil
// when it names none or the filter bounds the time already (--since and
// --until override what the words say).
func (s *core) queryTime(query string, f Filter) *timeexpr.Span {
	if !f.Since.IsZero() || !f.Until.IsZero() {
		return nil
	}
	span, ok := timeexpr.Find(query, s.queryAnchor())
	if !ok {
		return nil
	}
	return &span
}

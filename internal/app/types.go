package app

import (
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/memory"
)

// The application's own result and request types. Their JSON is the
// --json contract of the CLI and the structured results of the MCP server
// (docs/JSON.md); the cache's storage rows never leave the application.

// Entry is a memory entry in its current state, as list, log, show and
// search return it.
type Entry struct {
	memory.State
	Source  string `json:"source"` // the ref it came from (refs/synaptic/memory, ...), or git:history
	Private bool   `json:"private"`
	Commit  string `json:"commit,omitempty"` // for notes: the annotated commit
	// Decayed is set when maintenance archived the entry (not a person).
	Decayed bool `json:"decayed,omitempty"`
	// Unmerged names the branch the entry was written on when HEAD does
	// not contain its commit; Stale lists the files it names that changed
	// since it was written or last confirmed (code.go). Set by search,
	// agents' context and verify.
	Unmerged string      `json:"unmerged,omitempty"`
	Stale    []StaleFile `json:"stale,omitempty"`
}

// Hit is a search result. Score is higher-is-better; BM25 is SQLite FTS5's
// raw bm25() (lower is better), for --explain.
type Hit struct {
	Entry
	Score float64 `json:"score"`
	BM25  float64 `json:"bm25"`
	// Semantic searches only: ranks in each list (0: absent), cosine
	// similarity, fused score (session context included), the part of it
	// that came from the entries saved around it in its session, weight
	// (the product of the priors and what the query's time did) and how
	// often the entry was opened.
	LexRank int     `json:"bm25_rank,omitempty"`
	VecRank int     `json:"vector_rank,omitempty"`
	Cosine  float64 `json:"cosine,omitempty"`
	Fused   float64 `json:"fused,omitempty"`
	Context float64 `json:"context,omitempty"`
	Weight  float64 `json:"weight,omitempty"`
	Priors  *Priors `json:"priors,omitempty"`
	Reads   int     `json:"reads,omitempty"`
	// Pattern labels an issue that recurs ("[Pattern: seen N times since
	// DATE]").
	Pattern string `json:"pattern,omitempty"`
}

// Priors are the factors of a semantic hit's Weight: its tier, recency,
// confidence (reads) and relevance feedback, and Time, what the time the
// query names did (1: nothing).
type Priors struct {
	Tier       float64 `json:"tier"`
	Recency    float64 `json:"recency"`
	Confidence float64 `json:"confidence"`
	Feedback   float64 `json:"feedback"`
	Time       float64 `json:"time"`
	// Line is rank.OffLinePrior for memory of another branch's unmerged
	// work, else 1.
	Line float64 `json:"line"`
}

// Filter selects entries (see ParseFilter for the text form front ends
// receive).
type Filter struct {
	Types           []memory.Type
	Tags            []string // all must be present
	Tier            memory.Tier
	Since, Until    time.Time
	Author          string // case-insensitive substring of "Name <email>"
	Project         string
	Branch          string
	Session         string
	IncludeArchived bool
	OnlyArchived    bool
	Limit           int // 0: all
	// Branches is how memory of another branch's unmerged work is read.
	Branches Branches
}

// SearchMode is how a search ranked.
type SearchMode string

// Search modes.
const (
	ModeHybrid = SearchMode(cache.ModeHybrid) // BM25 and vectors, combined
	ModeVector = SearchMode(cache.ModeVector) // vectors only
	ModeBM25   = SearchMode(cache.ModeBM25)   // full-text only (the lexical fallback)
)

func entryOf(r cache.Row) Entry {
	return Entry{State: r.State, Source: r.Source, Private: r.Private, Commit: r.Commit, Decayed: r.Decayed}
}

func entriesOf(rows []cache.Row) []Entry {
	if rows == nil {
		return nil
	}
	out := make([]Entry, len(rows))
	for i, r := range rows {
		out[i] = entryOf(r)
	}
	return out
}

func hitsOf(hits []cache.Hit) []Hit {
	if hits == nil {
		return nil
	}
	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{Entry: entryOf(h.Row), Score: h.Score, BM25: h.BM25, LexRank: h.LexRank, VecRank: h.VecRank, Cosine: h.Cosine,
			Fused: h.Fused, Context: h.Context, Weight: h.Weight, Reads: h.Reads}
		if p := h.Prior; p.Tier != 0 {
			out[i].Priors = &Priors{Tier: p.Tier, Recency: p.Recency, Confidence: p.Confidence, Feedback: p.Feedback, Time: h.Time, Line: p.Line}
		}
	}
	return out
}

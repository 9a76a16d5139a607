// Package embed turns text into sentence vectors with a local pretrained
// model: the tokenizer, the model directory layout and two runtimes for the
// same ONNX graph (hugot's pure-Go backend, and ONNX Runtime when its
// shared library is installed). Nothing here touches git or SQLite.
package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Embedder computes L2-normalised sentence vectors.
type Embedder interface {
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dim is the length of every vector.
	Dim() int
	// ModelID names the model and its exact weights; vectors from different
	// ids are never compared.
	ModelID() string
}

// ErrNoModel means no model is installed where the search looked.
var ErrNoModel = errors.New("no embedding model installed")

// MaxTokens is the longest input the model reads; the rest is cut.
const MaxTokens = 128

// BatchSize bounds the texts in one forward pass.
const BatchSize = 32

// Runner executes the graph on token ids (padded by the runner).
type Runner interface {
	Run(ids [][]int64) ([][]float32, error)
	Close() error
}

var goRuntime func(Installed) (Runner, error)

// RegisterGoRuntime installs the in-process pure-Go runtime (package
// purego does, where it is linked). Without it the "go" backend runs in a
// git-synaptic-mcp --embed-worker process.
func RegisterGoRuntime(f func(Installed) (Runner, error)) { goRuntime = f }

func newGoRunner(m Installed) (Runner, error) {
	if goRuntime != nil {
		return goRuntime(m)
	}
	return newWorkerRunner(m)
}

// Model is a loaded model: an Embedder backed by one runtime.
type Model struct {
	info    Installed
	tok     *Tokenizer
	r       Runner
	backend string
	load    time.Duration
}

// Options choose the runtime.
type Options struct {
	// Backend is "auto" (ONNX Runtime when its library is found, else
	// pure Go), "go" or "ort".
	Backend string
	// ORTLibrary is the path of libonnxruntime.so; empty looks in the
	// data directory's lib/ and $GIT_SYNAPTIC_ORT_LIB.
	ORTLibrary string
}

// Load opens an installed model.
func Load(m Installed, opt Options) (*Model, error) {
	start := time.Now()
	// The tokenizer loads while the runtime starts (ONNX Runtime's first
	// session spends a quarter of a second in C, off the Go scheduler);
	// every path below waits for it.
	type loaded struct {
		tok *Tokenizer
		err error
	}
	tokc := make(chan loaded, 1)
	go func() {
		tok, err := LoadTokenizer(filepath.Join(m.Dir, "tokenizer.json"), MaxTokens)
		tokc <- loaded{tok, err}
	}()
	r, backend, err := newRunner(m, opt)
	tl := <-tokc
	if err != nil {
		return nil, fmt.Errorf("load %s with the %s backend: %w", m.Name, backend, err)
	}
	if tl.err != nil {
		r.Close()
		return nil, fmt.Errorf("load tokenizer of %s: %w", m.Name, tl.err)
	}
	return &Model{info: m, tok: tl.tok, r: r, backend: backend, load: time.Since(start)}, nil
}

// newRunner starts the runtime opt asks for ("auto": ONNX Runtime where
// its library is found, else pure Go) and says which it started.
func newRunner(m Installed, opt Options) (Runner, string, error) {
	backend := opt.Backend
	if backend == "" {
		backend = "auto"
	}
	lib := opt.ORTLibrary
	if lib == "" {
		lib = FindORTLibrary()
	}
	switch backend {
	case "auto":
		if lib != "" {
			if r, err := newORTRunner(m, lib); err == nil {
				return r, "ort", nil
			}
		}
		r, err := newGoRunner(m)
		return r, "go", err
	case "ort":
		if lib == "" {
			return nil, backend, errors.New("ONNX Runtime library not found: install it with 'make model' or set GIT_SYNAPTIC_ORT_LIB")
		}
		r, err := newORTRunner(m, lib)
		return r, backend, err
	case "go":
		r, err := newGoRunner(m)
		return r, backend, err
	}
	return nil, backend, fmt.Errorf("unknown embedding backend %q (want auto, go or ort)", backend)
}

// Dim implements Embedder.
func (m *Model) Dim() int { return m.info.Dim }

// ModelID implements Embedder.
func (m *Model) ModelID() string { return m.info.ID() }

// Backend is the runtime in use: "go" or "ort".
func (m *Model) Backend() string { return m.backend }

// LoadTime is how long Load took.
func (m *Model) LoadTime() time.Duration { return m.load }

// Close releases the runtime.
func (m *Model) Close() error { return m.r.Close() }

// Embed implements Embedder. Texts are cut to MaxTokens tokens; an empty
// text gets the vector of a single space.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	ids := make([][]int64, len(texts))
	order := make([]int, len(texts))
	for i, t := range texts {
		ids[i] = m.tok.Encode(t)
		if len(ids[i]) == 0 {
			ids[i] = m.tok.Encode(" ")
		}
		order[i] = i
	}
	// batches of similar lengths: less padding to compute
	sort.SliceStable(order, func(a, b int) bool { return len(ids[order[a]]) < len(ids[order[b]]) })
	out := make([][]float32, len(texts))
	for start := 0; start < len(order); start += BatchSize {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		chunk := order[start:min(start+BatchSize, len(order))]
		batch := make([][]int64, len(chunk))
		for i, k := range chunk {
			batch[i] = ids[k]
		}
		vecs, err := m.r.Run(batch)
		if err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		if len(vecs) != len(chunk) {
			return nil, fmt.Errorf("embed: model returned %d vectors for %d texts", len(vecs), len(chunk))
		}
		for i, v := range vecs {
			if len(v) != m.info.Dim {
				return nil, fmt.Errorf("embed: model returned %d dimensions, manifest says %d", len(v), m.info.Dim)
			}
			out[chunk[i]] = normalize(v)
		}
	}
	return out, nil
}

func normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// Cosine is the cosine similarity of two normalised vectors. Four
// running sums let the processor overlap the additions (patterns and
// consolidation compare hundreds of thousands of pairs per session start).
func Cosine(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// FindORTLibrary returns the ONNX Runtime shared library to use, or "".
// Order: $GIT_SYNAPTIC_ORT_LIB, then lib/ in the data directory.
func FindORTLibrary() string {
	if p := os.Getenv("GIT_SYNAPTIC_ORT_LIB"); p != "" {
		return p
	}
	matches, _ := filepath.Glob(filepath.Join(DataDir(), "lib", "libonnxruntime.so*"))
	for _, p := range matches {
		if !strings.HasSuffix(p, ".tmp") {
			return p
		}
	}
	return ""
}

// Package purego runs embedding models with hugot's pure-Go backend
// (gomlx simplego): no shared library needed. It is linked only into the
// long-running git-synaptic-mcp program, because hugot's packages cost
// every process about 3 ms to start; the CLI reaches it through that
// program's --embed-worker mode (embed.workerRunner).
package purego

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/knights-analytics/hugot"
	"github.com/knights-analytics/hugot/backends"
	"github.com/knights-analytics/hugot/options"
	"github.com/knights-analytics/hugot/pipelines"

	"github.com/git-synaptic/git-synaptic/embed"
)

func init() {
	embed.RegisterGoRuntime(func(m embed.Installed) (embed.Runner, error) { return newGoRunner(m) })
}

// goRunner runs the graph with hugot's pure-Go backend (gomlx simplego):
// no shared library needed. Our tokenizer supplies the ids, so both
// runtimes see the same input as the original model.
type goRunner struct {
	session  *hugot.Session
	pipeline *pipelines.FeatureExtractionPipeline
}

func newGoRunner(m embed.Installed) (r *goRunner, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("hugot: %v", p)
		}
	}()
	session, err := hugot.NewGoSession(
		options.WithGoMLXBatchBuckets([]int{1, 8, embed.BatchSize}),
		options.WithGoMLXSequenceBuckets([]int{16, 32, 64, embed.MaxTokens}),
	)
	if err != nil {
		return nil, err
	}
	p, err := hugot.NewPipeline(session, hugot.FeatureExtractionConfig{
		ModelPath:    m.Dir,
		Name:         "embed",
		OnnxFilename: "model.onnx",
		Options:      []hugot.FeatureExtractionOption{pipelines.WithOutputName("embeddings")},
	})
	if err != nil {
		return nil, errors.Join(err, session.Destroy())
	}
	return &goRunner{session: session, pipeline: p}, nil
}

// Run implements embed.Runner.
func (r *goRunner) Run(ids [][]int64) (out [][]float32, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("hugot: %v", p)
		}
	}()
	batch := backends.NewBatch(len(ids))
	defer func() { err = errors.Join(err, batch.Destroy()) }()
	batch.Input = make([]backends.TokenizedInput, len(ids))
	for i, seq := range ids {
		in := backends.TokenizedInput{TokenIDs: make([]uint32, len(seq)), AttentionMask: make([]uint32, len(seq)), MaxAttentionIndex: len(seq) - 1}
		for j, id := range seq {
			in.TokenIDs[j] = uint32(id)
			in.AttentionMask[j] = 1
		}
		batch.Input[i] = in
		batch.MaxSequenceLength = max(batch.MaxSequenceLength, len(seq))
	}
	if err := backends.CreateInputTensors(batch, r.pipeline.Model, "GO"); err != nil {
		return nil, err
	}
	if err := r.pipeline.Forward(batch); err != nil {
		return nil, err
	}
	res, err := r.pipeline.Postprocess(batch)
	if err != nil {
		return nil, err
	}
	return res.Embeddings, nil
}

// Close implements embed.Runner.
func (r *goRunner) Close() error { return r.session.Destroy() }

// Serve answers embedding requests on in/out for another process: one JSON
// array of token-id arrays per line in, one {"vecs": ...} or {"error": ...}
// per line out, until in closes.
func Serve(modelDir string, in io.Reader, out io.Writer) error {
	r, err := newGoRunner(embed.Installed{Dir: modelDir}) // the graph is all it reads
	if err != nil {
		return err
	}
	defer r.Close()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var ids [][]int64
		var resp struct {
			Vecs  [][]float32 `json:"vecs,omitempty"`
			Error string      `json:"error,omitempty"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ids); err != nil {
			resp.Error = "bad request: " + err.Error()
		} else if resp.Vecs, err = r.Run(ids); err != nil {
			resp.Error = err.Error()
		}
		if err := enc.Encode(resp); err != nil {
			return err
		}
	}
	return sc.Err()
}

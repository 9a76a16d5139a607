package embed

import (
	"errors"
	"fmt"

	"github.com/knights-analytics/hugot"
	"github.com/knights-analytics/hugot/backends"
	"github.com/knights-analytics/hugot/options"
	"github.com/knights-analytics/hugot/pipelines"
)

// goRunner runs the graph with hugot's pure-Go backend (gomlx simplego):
// no shared library needed. Our tokenizer supplies the ids, so both
// runtimes see the same input as the original model.
type goRunner struct {
	session  *hugot.Session
	pipeline *pipelines.FeatureExtractionPipeline
}

func newGoRunner(m Installed) (r *goRunner, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("hugot: %v", p)
		}
	}()
	session, err := hugot.NewGoSession(
		options.WithGoMLXBatchBuckets([]int{1, 8, batchSize}),
		options.WithGoMLXSequenceBuckets([]int{16, 32, 64, MaxTokens}),
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

func (r *goRunner) run(ids [][]int64) (out [][]float32, err error) {
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

func (r *goRunner) close() error { return r.session.Destroy() }

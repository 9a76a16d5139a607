package embed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// ortRunner runs the graph with ONNX Runtime's C library, loaded at run
// time from a path (no link-time dependency): about 15× the pure-Go
// throughput on this model.
type ortRunner struct {
	session *ort.DynamicAdvancedSession
}

var ortInit struct {
	sync.Mutex
	lib string
	err error
}

func initORT(lib string) error {
	ortInit.Lock()
	defer ortInit.Unlock()
	if ortInit.lib != "" {
		if ortInit.lib != lib {
			return fmt.Errorf("ONNX Runtime already loaded from %s", ortInit.lib)
		}
		return ortInit.err
	}
	ortInit.lib = lib
	ort.SetSharedLibraryPath(lib)
	// The official Linux builds send telemetry (1DS) since 1.24: each
	// process left /tmp/mat-debug-PID.log, a device id and an event
	// database under ~/.cache/Microsoft. The runtime reads this switch
	// before it initialises; nothing is then created or sent.
	os.Setenv("ORT_DISABLE_TELEMETRY", "1")
	if ortInit.err = ort.InitializeEnvironment(ort.WithLogLevelError()); ortInit.err != nil {
		return ortInit.err
	}
	ortInit.err = ort.DisableTelemetry()
	return ortInit.err
}

func newORTRunner(m Installed, lib string) (*ortRunner, error) {
	if err := initORT(lib); err != nil {
		return nil, fmt.Errorf("load ONNX Runtime %s: %w", lib, err)
	}
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	// One intra-op thread: queries are tiny and several processes may run
	// at once (hooks, MCP server, CLI).
	if err := opts.SetIntraOpNumThreads(1); err != nil {
		return nil, err
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return nil, err
	}
	s, err := ort.NewDynamicAdvancedSession(filepath.Join(m.Dir, "model.onnx"),
		[]string{"input_ids", "attention_mask"}, []string{"embeddings"}, opts)
	if err != nil {
		return nil, err
	}
	return &ortRunner{session: s}, nil
}

// Run implements Runner.
func (r *ortRunner) Run(ids [][]int64) ([][]float32, error) {
	T := 0
	for _, s := range ids {
		T = max(T, len(s))
	}
	B := len(ids)
	flat := make([]int64, B*T)
	mask := make([]int64, B*T)
	for i, s := range ids {
		copy(flat[i*T:], s)
		for j := range s {
			mask[i*T+j] = 1
		}
	}
	shape := ort.NewShape(int64(B), int64(T))
	in, err := ort.NewTensor(shape, flat)
	if err != nil {
		return nil, err
	}
	defer in.Destroy()
	am, err := ort.NewTensor(shape, mask)
	if err != nil {
		return nil, err
	}
	defer am.Destroy()
	outputs := []ort.Value{nil}
	if err := r.session.Run([]ort.Value{in, am}, outputs); err != nil {
		return nil, err
	}
	defer outputs[0].Destroy()
	t, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, errors.New("model output is not float32")
	}
	data := t.GetData()
	dims := t.GetShape()
	if len(dims) != 2 || dims[0] != int64(B) {
		return nil, fmt.Errorf("model output shape %v", dims)
	}
	d := int(dims[1])
	out := make([][]float32, B)
	for i := range out {
		out[i] = append([]float32(nil), data[i*d:(i+1)*d]...)
	}
	return out, nil
}

// Close implements Runner.
func (r *ortRunner) Close() error { return r.session.Destroy() }

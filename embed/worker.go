package embed

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/git-synaptic/git-synaptic/internal/sibling"
)

// WorkerFlag makes git-synaptic-mcp serve embedding requests for another
// process instead of MCP (see package purego).
const WorkerFlag = "--embed-worker"

// workerProgram is the program that links the pure-Go runtime.
const workerProgram = "git-synaptic-mcp"

// workerRunner runs the pure-Go runtime in a git-synaptic-mcp child: the
// CLI stays free of hugot's start-up cost and only the commands that embed
// without ONNX Runtime pay for a child. The child dies with its parent
// (PDEATHSIG) and exits when its stdin closes.
type workerRunner struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func findWorker() (string, error) {
	p, err := sibling.Path(workerProgram)
	if err != nil {
		return "", fmt.Errorf("the pure-Go runtime needs %s beside git-synaptic or on PATH (reinstall with make install), or install ONNX Runtime with 'git synaptic model install --ort'", workerProgram)
	}
	return p, nil
}

func newWorkerRunner(m Installed) (Runner, error) {
	prog, err := findWorker()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(prog, WorkerFlag, m.Dir)
	cmd.Stderr = os.Stderr
	dieWithParent(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", prog, err)
	}
	return &workerRunner{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// Run implements Runner.
func (w *workerRunner) Run(ids [][]int64) ([][]float32, error) {
	req, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	if _, err := w.in.Write(append(req, '\n')); err != nil {
		return nil, fmt.Errorf("embedding worker: %w", err)
	}
	line, err := w.out.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("embedding worker stopped: %w", err)
	}
	var resp struct {
		Vecs  [][]float32 `json:"vecs"`
		Error string      `json:"error"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		return nil, fmt.Errorf("embedding worker: %w", err)
	}
	if resp.Error != "" {
		return nil, errors.New(resp.Error)
	}
	return resp.Vecs, nil
}

// Close implements Runner: the worker exits when its input closes.
func (w *workerRunner) Close() error {
	w.in.Close()
	return w.cmd.Wait()
}

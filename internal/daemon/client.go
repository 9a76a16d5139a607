package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"time"
)

// Errors of Call. With each the command has not run (ErrLost: may have
// partly run, in a daemon that died), and the caller runs it itself.
var (
	ErrUnavailable = errors.New("no daemon answers")
	ErrDeclined    = errors.New("the daemon declined")
	ErrLost        = errors.New("the daemon ended during the command")
)

// dialTimeout bounds connecting to the socket.
const dialTimeout = 200 * time.Millisecond

// Ran is what became of a request: the daemon's plan for it (no Args
// when it made none), what was read from standard input for it, and the
// command's response.
type Ran struct {
	Plan Plan
	// Stdin is what was read from standard input (StdinRead), which a
	// caller running the command itself must give it in its place.
	Stdin     []byte
	StdinRead bool
	Response
}

// Notify asks the daemon at path to run req and returns once the daemon
// has taken it, without its output: for git hooks, which must not hold
// git up. It waits for nothing: a busy daemon runs req once free, unless
// the same command in the same directory already waits there (that one
// does its work), and a daemon that stops first drops it (the next
// command catches up); no daemon, or one that declines, is an error and
// nothing runs. It sends no standard input.
func Notify(ctx context.Context, path string, req Request) error {
	req.NoWait = true
	_, err := call(ctx, path, req, nil, false)
	return err
}

// Call asks the daemon at path to run req and returns what became of it.
// Once the daemon has made its plan, Call reads standard input from in as
// far as the plan asks.
func Call(ctx context.Context, path string, req Request, in io.Reader) (Ran, error) {
	return call(ctx, path, req, in, true)
}

func call(ctx context.Context, path string, req Request, in io.Reader, await bool) (ran Ran, err error) {
	d := net.Dialer{Timeout: dialTimeout}
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return ran, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	conn.SetDeadline(time.Now().Add(handshakeTimeout))
	dec, enc := json.NewDecoder(conn), json.NewEncoder(conn)
	var r reply
	if err := enc.Encode(req); err != nil {
		return ran, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if err := dec.Decode(&r); err != nil {
		return ran, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if req.Control != "" {
		ran.Response = r.Response
		return ran, nil
	}
	if r.Plan == nil {
		ran.Response = r.Response
		return ran, fmt.Errorf("%w: %s", ErrDeclined, r.Declined)
	}
	// From here the daemon is there: a failure is its refusal, not its
	// absence, until the command runs.
	ran.Plan = *r.Plan
	if ran.Plan.Stdin > 0 {
		if in != nil {
			ran.Stdin, err = io.ReadAll(io.LimitReader(in, ran.Plan.Stdin))
			ran.StdinRead = true
			if err != nil {
				return ran, fmt.Errorf("standard input: %w", err)
			}
		}
		conn.SetDeadline(time.Now().Add(inputTimeout))
		if err := enc.Encode(input{Stdin: ran.Stdin}); err != nil {
			return ran, fmt.Errorf("%w: %v", ErrDeclined, err)
		}
		conn.SetDeadline(time.Now().Add(handshakeTimeout))
	}
	r = reply{}
	if err := dec.Decode(&r); err != nil {
		return ran, fmt.Errorf("%w: %v", ErrDeclined, err)
	}
	if !r.Ready {
		ran.Response = r.Response
		return ran, fmt.Errorf("%w: %s", ErrDeclined, r.Declined)
	}
	if err := enc.Encode(proceed{Go: true}); err != nil {
		return ran, fmt.Errorf("%w: %v", ErrDeclined, err)
	}
	if !await {
		return ran, nil
	}
	conn.SetDeadline(time.Time{})
	r = reply{}
	if err := dec.Decode(&r); err != nil {
		if ctx.Err() != nil {
			return ran, ctx.Err()
		}
		return ran, fmt.Errorf("%w: %v", ErrLost, err)
	}
	ran.Response = r.Response
	if r.Declined != "" {
		return ran, fmt.Errorf("%w: %s", ErrDeclined, r.Declined)
	}
	return ran, nil
}

func dirOf(path string) string { return filepath.Dir(path) }

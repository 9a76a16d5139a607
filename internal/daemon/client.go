package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// Notify asks the daemon at path to run req and returns once it has
// started, without its output: for git hooks, which must not hold git up.
// It waits for nothing: a daemon that is busy, or none, is an error and
// nothing runs.
func Notify(ctx context.Context, path string, req Request) error {
	req.NoWait = true
	_, err := call(ctx, path, req, false)
	return err
}

// Call asks the daemon at path to run req and returns its response.
func Call(ctx context.Context, path string, req Request) (Response, error) {
	return call(ctx, path, req, true)
}

func call(ctx context.Context, path string, req Request, await bool) (Response, error) {
	d := net.Dialer{Timeout: dialTimeout}
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return Response{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	conn.SetDeadline(time.Now().Add(handshakeTimeout))
	dec, enc := json.NewDecoder(conn), json.NewEncoder(conn)
	var r reply
	if err := enc.Encode(req); err != nil {
		return Response{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if err := dec.Decode(&r); err != nil {
		return Response{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	switch {
	case req.Control != "":
		return r.Response, nil
	case !r.Ready:
		return r.Response, fmt.Errorf("%w: %s", ErrDeclined, r.Declined)
	}
	if err := enc.Encode(proceed{Go: true}); err != nil {
		return Response{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if !await {
		return Response{}, nil
	}
	conn.SetDeadline(time.Time{})
	if err := dec.Decode(&r); err != nil {
		if ctx.Err() != nil {
			return Response{}, ctx.Err()
		}
		return Response{}, fmt.Errorf("%w: %v", ErrLost, err)
	}
	if r.Declined != "" {
		return r.Response, fmt.Errorf("%w: %s", ErrDeclined, r.Declined)
	}
	return r.Response, nil
}

func dirOf(path string) string { return filepath.Dir(path) }

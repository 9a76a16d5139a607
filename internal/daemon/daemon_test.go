package daemon

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// testSocket is a socket path named name in a private runtime directory
// of the test's own.
func testSocket(t *testing.T, name string) string {
	t.Helper()
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	dir, err := SocketDir()
	if err != nil {
		t.Fatal(err)
	}
	return SocketPath(dir, name)
}

// start serves in a private directory of its own with handler and
// returns the socket; the server is stopped and waited for at the end.
func start(t *testing.T, idle time.Duration, handler Handler) (string, chan error) {
	t.Helper()
	path := testSocket(t, "test")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- (&Server{Path: path, Version: "test", Idle: idle, Handler: handler, BusyWait: 100 * time.Millisecond}).Serve(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("the server did not stop")
		}
	})
	listening(t, path)
	return path, done
}

// serve runs srv until the test ends, then stops it and checks that it
// served without error; it returns once srv listens.
func serve(t *testing.T, srv *Server) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	listening(t, srv.Path)
}

// listening waits for a server to listen on path. The socket file appears
// at bind, before listen and its chmod: the server listens once the file
// is private.
func listening(t *testing.T, path string) {
	t.Helper()
	waitFor(t, func() bool { fi, err := os.Stat(path); return err == nil && fi.Mode().Perm() == 0o600 })
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

func echo(_ context.Context, req Request) Response {
	return Response{Code: len(req.Args), Stdout: []byte(strings.Join(req.Args, " ")), Stderr: req.Stdin}
}

// A request runs once and comes back with its output and code; the
// socket and its directory are private; status counts it.
func TestCallRunsTheRequest(t *testing.T) {
	path, _ := start(t, time.Minute, echo)
	resp, err := Call(context.Background(), path, Request{Args: []string{"search", "x"}}, strings.NewReader("not asked for"))
	if err != nil || resp.Code != 2 || string(resp.Stdout) != "search x" || len(resp.Stderr) != 0 || resp.StdinRead {
		t.Fatalf("%+v %v", resp, err)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (want %o) %v", p, fi.Mode().Perm(), want, err)
		}
	}
	resp, err = Call(context.Background(), path, Request{Control: "status"}, nil)
	if err != nil || resp.Status == nil || resp.Status.Requests != 1 || resp.Status.PID != os.Getpid() {
		t.Errorf("status: %+v %v", resp.Status, err)
	}
}

// The daemon's plan decides what runs and how much standard input the
// client reads and sends, before the request waits for its turn: a
// declined request reads none, and a client that read input for a request
// it then could not run has it to run the command itself.
func TestThePlanDecides(t *testing.T) {
	path := testSocket(t, "plan")
	release, running := make(chan struct{}), make(chan struct{}, 1)
	srv := &Server{Path: path, Version: "test", BusyWait: 100 * time.Millisecond,
		Prepare: func(req Request) (Plan, string) {
			switch req.Args[0] {
			case "no":
				return Plan{}, "not mine"
			case "read":
				if req.StdinTTY {
					return Plan{}, "typed"
				}
				return Plan{Args: append([]string{"read", "--id=7"}, req.Args[1:]...), Stdin: 5}, ""
			}
			return Plan{Args: req.Args}, ""
		},
		Handler: func(_ context.Context, req Request) Response {
			if req.Args[0] == "hold" {
				running <- struct{}{}
				<-release
			}
			return echo(context.Background(), req)
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	listening(t, path)

	in := strings.NewReader("0123456789")
	ran, err := Call(context.Background(), path, Request{Args: []string{"no"}}, in)
	if !errors.Is(err, ErrDeclined) || ran.StdinRead || in.Len() != 10 || ran.Plan.Args != nil {
		t.Errorf("declined: %v, read %v, %d bytes left, plan %v", err, ran.StdinRead, in.Len(), ran.Plan)
	}
	if _, err := Call(context.Background(), path, Request{Args: []string{"read"}, StdinTTY: true}, in); !errors.Is(err, ErrDeclined) || in.Len() != 10 {
		t.Errorf("typed input: %v, %d bytes left", err, in.Len())
	}
	ran, err = Call(context.Background(), path, Request{Args: []string{"read", "x"}}, in)
	if err != nil || string(ran.Stdout) != "read --id=7 x" || string(ran.Stderr) != "01234" || !ran.StdinRead ||
		string(ran.Stdin) != "01234" || strings.Join(ran.Plan.Args, " ") != "read --id=7 x" {
		t.Errorf("planned: %+v %v", ran, err)
	}

	// busy: the plan was made and the input read, then the turn never came
	held := make(chan error, 1)
	go func() {
		_, err := Call(context.Background(), path, Request{Args: []string{"hold"}}, nil)
		held <- err
	}()
	<-running
	ran, err = Call(context.Background(), path, Request{Args: []string{"read", "y"}}, strings.NewReader("abc"))
	if !errors.Is(err, ErrDeclined) || !ran.StdinRead || string(ran.Stdin) != "abc" || strings.Join(ran.Plan.Args, " ") != "read --id=7 y" {
		t.Errorf("busy: %v, read %v %q, plan %v", err, ran.StdinRead, ran.Stdin, ran.Plan)
	}
	close(release)
	if err := <-held; err != nil {
		t.Error(err)
	}
}

// A second daemon racing for the same socket exits with ErrRunning and
// the first keeps serving.
func TestSecondDaemonExits(t *testing.T) {
	path, _ := start(t, time.Minute, echo)
	err := (&Server{Path: path, Handler: echo}).Serve(context.Background())
	if !errors.Is(err, ErrRunning) {
		t.Fatalf("second daemon: %v", err)
	}
	if _, err := Call(context.Background(), path, Request{Args: []string{"x"}}, nil); err != nil {
		t.Fatalf("the first stopped serving: %v", err)
	}
}

// A socket file a killed daemon left behind is replaced; a client of a
// dead socket is told to run the command itself.
func TestStaleSocketIsReplaced(t *testing.T) {
	path := testSocket(t, "stale")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close() // as a killed daemon leaves it
	if _, err := Call(context.Background(), path, Request{Args: []string{"x"}}, nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("dead socket: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&Server{Path: path, Handler: echo}).Serve(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, func() bool {
		_, err := Call(context.Background(), path, Request{Args: []string{"x"}}, nil)
		return err == nil
	})
}

// A request that cannot start within the busy wait is declined, not run;
// the one running is not disturbed.
func TestBusyIsDeclined(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	ran := 0
	path, _ := start(t, time.Minute, func(ctx context.Context, req Request) Response {
		mu.Lock()
		ran++
		mu.Unlock()
		if req.Args[0] == "slow" {
			<-release
		}
		return Response{Code: 7}
	})
	slow := make(chan error, 1)
	go func() {
		resp, err := Call(context.Background(), path, Request{Args: []string{"slow"}}, nil)
		if err == nil && resp.Code != 7 {
			err = errors.New("wrong code")
		}
		slow <- err
	}()
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return ran == 1 })
	if _, err := Call(context.Background(), path, Request{Args: []string{"fast"}}, nil); !errors.Is(err, ErrDeclined) {
		t.Errorf("a request behind a slow one: %v", err)
	}
	close(release)
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if ran != 1 {
		t.Errorf("%d commands ran, want 1", ran)
	}
}

// The daemon exits by itself once idle, and on stop; either way the
// socket file goes.
func TestIdleAndStop(t *testing.T) {
	path, done := start(t, 50*time.Millisecond, echo)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an idle daemon did not exit")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the socket is left: %v", err)
	}
	done <- nil // for the cleanup
	path, done = start(t, time.Minute, echo)
	if resp, err := Call(context.Background(), path, Request{Control: "stop"}, nil); err != nil || resp.Declined != "stopping" {
		t.Fatalf("stop: %+v %v", resp, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	done <- nil
}

// A directory others can open, or a link, is refused: no daemon starts
// there and SocketDir says why.
func TestLoosePermissionsAreRefused(t *testing.T) {
	rt := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", rt)
	dir := filepath.Join(rt, "git-synaptic")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := SocketDir(); !errors.Is(err, ErrUnsafe) {
		t.Errorf("mode 0755: %v", err)
	}
	err := (&Server{Path: SocketPath(dir, "x"), Handler: echo}).Serve(context.Background())
	if !errors.Is(err, ErrUnsafe) {
		t.Errorf("serve in a loose directory: %v", err)
	}
	os.Remove(dir)
	other := t.TempDir()
	if err := os.Symlink(other, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := SocketDir(); !errors.Is(err, ErrUnsafe) {
		t.Errorf("a link: %v", err)
	}
}

// Notify returns once the daemon took the command, without waiting for
// it: a busy daemon runs it once free. One like it (the same command in
// the same directory) that comes while it waits is declined at once, for
// the one waiting does its work; another command waits beside it.
func TestNotify(t *testing.T) {
	release := make(chan struct{})
	ran := make(chan string, 8)
	path, _ := start(t, time.Minute, func(ctx context.Context, req Request) Response {
		ran <- req.Args[0]
		<-release
		return Response{}
	})
	notify := func(cmd string) error {
		t.Helper()
		begun := time.Now()
		err := Notify(context.Background(), path, Request{Args: []string{cmd}, Dir: "/repo"})
		if took := time.Since(begun); took > 500*time.Millisecond {
			t.Fatalf("notifying %s took %v", cmd, took)
		}
		return err
	}
	if err := notify("post-commit"); err != nil {
		t.Fatal(err)
	}
	if got := <-ran; got != "post-commit" {
		t.Fatalf("ran %q", got)
	}
	// the daemon is busy: these wait
	if err := notify("post-commit"); err != nil {
		t.Fatalf("a notification to a busy daemon: %v", err)
	}
	if err := notify("post-merge"); err != nil {
		t.Fatalf("another command's notification: %v", err)
	}
	if err := notify("post-commit"); !errors.Is(err, ErrDeclined) {
		t.Fatalf("a notification whose like waits: %v, want it declined", err)
	}
	select {
	case got := <-ran:
		t.Fatalf("%q ran while the daemon was busy", got)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	var got []string
	for range 2 {
		select {
		case cmd := <-ran:
			got = append(got, cmd)
		case <-time.After(10 * time.Second):
			t.Fatalf("the waiting notifications ran %v", got)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"post-commit", "post-merge"}) {
		t.Fatalf("the waiting notifications ran %v", got)
	}
	select {
	case cmd := <-ran:
		t.Fatalf("the declined notification ran: %q", cmd)
	case <-time.After(50 * time.Millisecond):
	}
	// once it ran, the next like it waits again
	if err := notify("post-commit"); err != nil {
		t.Fatal(err)
	}
	if cmd := <-ran; cmd != "post-commit" {
		t.Fatalf("ran %q", cmd)
	}
}

// Background work runs after a request, a piece at a time, until it
// reports no more; a request that comes meanwhile is served, not declined.
func TestBackgroundRunsBetweenRequests(t *testing.T) {
	var mu sync.Mutex
	pieces := 0
	path := testSocket(t, "bg")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	srv := &Server{Path: path, Idle: time.Minute, Handler: echo, BusyWait: 2 * time.Second,
		Background: func(ctx context.Context) bool {
			time.Sleep(20 * time.Millisecond) // a piece of work
			mu.Lock()
			defer mu.Unlock()
			pieces++
			return pieces < 20
		}}
	go func() { done <- srv.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	listening(t, path)
	count := func() int { mu.Lock(); defer mu.Unlock(); return pieces }
	time.Sleep(50 * time.Millisecond)
	if n := count(); n != 0 {
		t.Fatalf("background work before any request: %d pieces", n)
	}
	if _, err := Call(context.Background(), path, Request{Args: []string{"a"}}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return count() >= 3 })
	if resp, err := Call(context.Background(), path, Request{Args: []string{"b", "c"}}, nil); err != nil || resp.Code != 2 {
		t.Fatalf("a request during background work: %+v %v", resp, err)
	}
	// the second request woke it once more: it may look again once
	waitFor(t, func() bool { return count() >= 20 })
	time.Sleep(100 * time.Millisecond)
	settled := count()
	time.Sleep(100 * time.Millisecond)
	if n := count(); n > 21 || n != settled {
		t.Errorf("background work went on after it said no more: %d pieces, then %d", settled, n)
	}
}

// With WakeAtStart, background work runs once the daemon has started and
// been quiet for StartQuiet, before any request: what the command that
// started it left it to do.
func TestBackgroundCanFollowTheStart(t *testing.T) {
	path := testSocket(t, "wake")
	const quiet = 50 * time.Millisecond // StartQuiet holds the first piece back longer
	var mu sync.Mutex
	var ran []time.Time
	srv := &Server{Path: path, Idle: time.Minute, Handler: echo, Quiet: quiet, WakeAtStart: true,
		Background: func(context.Context) bool {
			mu.Lock()
			defer mu.Unlock()
			ran = append(ran, time.Now())
			return len(ran) < 3
		}}
	begun := time.Now()
	serve(t, srv)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(ran) >= 3 })
	mu.Lock()
	defer mu.Unlock()
	if gap := ran[0].Sub(begun); gap < StartQuiet {
		t.Errorf("background work began %v after the start, want %v of quiet", gap, StartQuiet)
	}
}

// Background work waits until no request has run for Quiet: a burst of
// requests is not held up by it, and it runs once the burst is over.
func TestBackgroundWaitsForQuiet(t *testing.T) {
	path := testSocket(t, "test")
	const quiet = 150 * time.Millisecond
	var mu sync.Mutex
	var ended, ran []time.Time // requests' ends, background pieces' starts
	srv := &Server{Path: path, Version: "test", Quiet: quiet,
		Handler: func(_ context.Context, req Request) Response {
			mu.Lock()
			defer mu.Unlock()
			ended = append(ended, time.Now())
			return Response{}
		},
		Background: func(context.Context) bool {
			mu.Lock()
			defer mu.Unlock()
			ran = append(ran, time.Now())
			return false
		}}
	serve(t, srv)
	for range 8 {
		if _, err := Call(context.Background(), path, Request{Args: []string{"x"}}, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(ran) > 0 })
	mu.Lock()
	defer mu.Unlock()
	for _, r := range ran {
		last := time.Time{}
		for _, e := range ended {
			if e.Before(r) && e.After(last) {
				last = e
			}
		}
		if gap := r.Sub(last); gap < quiet {
			t.Errorf("background work began %v after a request, want %v of quiet", gap, quiet)
		}
	}
}

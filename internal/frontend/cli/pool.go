package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/app"
)

// sessionPool holds, in the warm process, the repositories that requests
// opened, each as an app.Session that every later request there reuses:
// the open cache and the other projects a cross-project search opened.
// Vector searches read the cache's index, as the command run in place
// does (an index kept in memory is slower than sqlite-vec's at tens of
// thousands of vectors). A request sees the refs as they are when
// it starts (app.Session), so results are those of the command run in
// place; only the opening is saved.
type sessionPool struct {
	models *app.WarmModels
	mu     sync.Mutex
	open   map[string]*pooled
	// declined is set when the request being served met git config
	// synaptic.daemon false in its repository; the daemon serves one
	// request at a time and clears it before each.
	declined bool
}

// errDaemonOff stops a request in the daemon where synaptic.daemon is
// false: the client then runs it in place.
var errDaemonOff = errors.New("synaptic.daemon is false here")

// refuses reports whether s's repository turns the daemon off, and marks
// the request declined if so.
func (p *sessionPool) refuses(ctx context.Context, s *app.Service) bool {
	if s.DaemonOff(ctx) {
		p.declined = true
	}
	return p.declined
}

type pooled struct {
	sess *app.Session
	used time.Time
}

// poolSize bounds the repositories kept open, each with its cache.
const poolSize = 4

// do runs f in the Session for the request's repository and
// configuration, opened on first use; the request's own values (where
// warnings go, --as-of, the agent session) apply to this call only.
func (p *sessionPool) do(e *env, f func(*app.Service) error) error {
	opts := e.options()
	sess, err := p.get(e.dir, opts)
	if err != nil {
		return err
	}
	return sess.DoAs(e.ctx, opts.Per(), func(s *app.Service) error {
		if p.refuses(e.ctx, s) {
			return errDaemonOff
		}
		return f(s)
	})
}

// get returns the Session for dir and opts, opening it and closing the
// least recently used one beyond poolSize.
func (p *sessionPool) get(dir string, opts app.Options) (*app.Session, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	key := poolKey(abs, opts)
	p.mu.Lock()
	defer p.mu.Unlock()
	if x := p.open[key]; x != nil {
		x.used = time.Now()
		return x.sess, nil
	}
	sess, err := app.OpenSession(abs, opts)
	if err != nil {
		return nil, err
	}
	if p.open == nil {
		p.open = map[string]*pooled{}
	}
	p.open[key] = &pooled{sess: sess, used: time.Now()}
	for len(p.open) > poolSize {
		oldest := ""
		for k, x := range p.open {
			if oldest == "" || x.used.Before(p.open[oldest].used) {
				oldest = k
			}
		}
		p.open[oldest].sess.Close()
		delete(p.open, oldest)
	}
	return sess, nil
}

// close closes every Session.
func (p *sessionPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, x := range p.open {
		x.sess.Close()
		delete(p.open, k)
	}
}

// poolKey names a repository as a request would open it: its directory,
// what in the environment decides which repository and configuration git
// finds there (GIT_DIR, HOME, PATH...), and the Session-wide options. The
// agent session and agent ids, and how long a cache write waits (short
// for hooks), are per request and left out: a hook and a search share
// one Session, its cache and what that holds in memory.
func poolKey(abs string, opts app.Options) string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "GIT_SYNAPTIC_SESSION", k == "GIT_SYNAPTIC_AGENT":
		case strings.HasPrefix(k, "GIT_"), strings.HasPrefix(k, "XDG_"), k == "HOME", k == "PATH", k == "TMPDIR":
			env = append(env, kv)
		}
	}
	slices.Sort(env)
	parts := append([]string{abs, opts.Model, opts.EmbedBackend, opts.Projects}, env...)
	return strings.Join(parts, "\x00")
}

// Package web serves a local view of project memory to a browser: the
// timeline, search, entries with their history, rules and patterns to
// review, the code's co-change neighbourhoods and the repository's status.
// It is a front end over the application like the CLI and the MCP server:
// handlers call the app, never SQL or git.
//
// It is for the user at this machine only. The server listens on
// 127.0.0.1; every request needs the per-run token (given once in the URL
// printed at start, then kept in a SameSite=Strict, HttpOnly cookie); the
// Host header must name the loopback address, so a web page cannot reach
// it through DNS rebinding; and the few writes (accepting or dismissing a
// pending rule, resolving a pattern) are POSTs that carry a form token
// derived from the run's token. Pages allow no script but their own, and
// memory is rendered as escaped text or a safe subset of Markdown.
package web

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/memory"
)

//go:embed templates/*.html static/*
var assets embed.FS

// Server serves one repository's memory.
type Server struct {
	sess  *app.Session
	token string
	csrf  string
	hosts map[string]bool
	pages map[string]*template.Template
	mux   *http.ServeMux
}

// NewToken returns a random token for one run of the server.
func NewToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// call is one request's view of the server: the Service, valid while the
// request runs (app.Session).
type call struct {
	svc *app.Service
}

// New returns a Server over sess that accepts requests carrying token and
// addressed to addr (host:port, as the listener has it).
func New(sess *app.Session, token, addr string) (*Server, error) {
	if len(token) < 16 {
		return nil, errors.New("web: the token is too short")
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("web: address %q: %w", addr, err)
	}
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("csrf"))
	s := &Server{sess: sess, token: token, csrf: hex.EncodeToString(mac.Sum(nil)),
		hosts: map[string]bool{"127.0.0.1:" + port: true, "localhost:" + port: true, "[::1]:" + port: true}}
	if s.pages, err = parsePages(); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

// samePath reports whether back is a path on this server. Browsers read
// a backslash as a slash, so /\evil.com is //evil.com, another site; so
// are a scheme, a host and control characters.
func samePath(back string) bool {
	if !strings.HasPrefix(back, "/") || strings.HasPrefix(back, "//") || strings.ContainsAny(back, "\\\r\n\t") {
		return false
	}
	u, err := url.Parse(back)
	return err == nil && u.Scheme == "" && u.Host == "" && u.User == nil
}

// cookieName is per port: cookies do not tell ports apart, and two
// servers (two repositories) may run at once.
func (s *Server) cookieName(r *http.Request) string {
	_, port, _ := net.SplitHostPort(r.Host)
	return "synaptic_" + port
}

func (s *Server) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(assets, "static")
	m.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	m.HandleFunc("GET /{$}", s.page(call.timeline))
	m.HandleFunc("GET /search", s.page(call.search))
	m.HandleFunc("GET /entry/{id}", s.page(call.entry))
	m.HandleFunc("GET /rules", s.page(call.rules))
	m.HandleFunc("POST /rules/accept", s.write(call.acceptRule))
	m.HandleFunc("POST /rules/dismiss", s.write(call.dismissRule))
	m.HandleFunc("POST /patterns/resolve", s.write(call.resolvePattern))
	m.HandleFunc("GET /code", s.page(call.code))
	m.HandleFunc("GET /status", s.page(call.status))
	s.mux = m
}

// ServeHTTP checks the host and the token, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if !s.hosts[r.Host] {
		http.Error(w, "this server answers only to 127.0.0.1", http.StatusMisdirectedRequest)
		return
	}
	if t := r.URL.Query().Get("token"); t != "" {
		if !s.validToken(t) {
			http.Error(w, "wrong token: open the URL that 'git synaptic web' printed", http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: s.cookieName(r), Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q := r.URL.Query()
		q.Del("token")
		u := *r.URL
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return
	}
	c, err := r.Cookie(s.cookieName(r))
	if err != nil || !s.validToken(c.Value) {
		http.Error(w, "no token: open the URL that 'git synaptic web' printed", http.StatusUnauthorized)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) validToken(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

// view is what a page handler returns: a template and its data, or an
// error with its status.
type view struct {
	name  string
	title string
	data  any
}

type httpError struct {
	code int
	err  error
}

func (e httpError) Error() string { return e.err.Error() }

// statusOf maps an application error to an HTTP status.
func statusOf(err error) int {
	var he httpError
	switch {
	case errors.As(err, &he):
		return he.code
	case errors.Is(err, app.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, app.ErrAmbiguous), errors.Is(err, app.ErrNoWords), errors.Is(err, app.ErrInvalidRequest), errors.Is(err, memory.ErrInvalid):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// page wraps a read handler: run in the session (one at a time, on fresh
// refs), rendered.
func (s *Server) page(fn func(call, *http.Request) (view, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var v view
		err := s.sess.Do(r.Context(), func(svc *app.Service) error {
			var err error
			v, err = fn(call{svc}, r)
			return err
		})
		if err != nil {
			w.WriteHeader(statusOf(err))
			v = view{name: "error", title: "Error", data: err.Error()}
		}
		s.render(w, r, v)
	}
}

// write wraps a POST: the form token must match and the request must come
// from this origin; it redirects back with what it did.
func (s *Server) write(fn func(call, *http.Request) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// A browser may send "null" (privacy settings): the form token
		// decides then.
		if o := r.Header.Get("Origin"); o != "" && o != "null" && !s.hosts[strings.TrimPrefix(o, "http://")] {
			http.Error(w, "cross-site request refused", http.StatusForbidden)
			return
		}
		if err := r.ParseForm(); err != nil || subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
			http.Error(w, "cross-site request refused (missing or wrong form token): reload the page", http.StatusForbidden)
			return
		}
		var msg string
		err := s.sess.Do(r.Context(), func(svc *app.Service) error {
			var err error
			msg, err = fn(call{svc}, r)
			return err
		})
		if err != nil {
			w.WriteHeader(statusOf(err))
			s.render(w, r, view{name: "error", title: "Error", data: err.Error()})
			return
		}
		back := r.PostForm.Get("back")
		if !samePath(back) {
			back = "/rules"
		}
		sep := "?"
		if strings.Contains(back, "?") {
			sep = "&"
		}
		http.Redirect(w, r, back+sep+"done="+url.QueryEscape(msg), http.StatusSeeOther)
	}
}

// Serve serves srv on ln until ctx ends, then shuts down, waiting up to
// five seconds for requests in flight.
func Serve(ctx context.Context, ln net.Listener, srv *Server) error {
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

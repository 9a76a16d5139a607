package app

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/memory"
)

// A repository may subscribe to the memory of others, such as an org-wide
// memory repository. Each subscription is a config section,
// synaptic-subscription.NAME.url, so it stays in this clone. Its memory is
// fetched from the URL into refs/synaptic-sub/NAME/*, which the cache
// indexes with the subscription as provenance and nothing here writes or
// pushes: sync pushes refs/synaptic/* only, and refFor refuses operations
// on these entries. The one way to add to a subscription is save --to,
// which pushes a commit to the subscription's URL with the user's own
// access there, and moves the local copy only once that push succeeded.
const (
	subPrefix  = "refs/synaptic-sub/"
	subSection = "synaptic-subscription"
	// outboxPrefix holds, per save --to, the subscription's memory as
	// fetched and the commit built on it until its push is answered, so
	// that gc cannot take them meanwhile; never indexed or pushed under
	// its own name.
	outboxPrefix = "refs/synaptic-outbox/"
)

// ErrNoSubscription is returned for a subscription name this repository
// does not have.
var ErrNoSubscription = errors.New("no such subscription")

// Subscription is a repository whose memory this one follows, read-only.
type Subscription struct {
	Name    string `json:"name"`
	URL     string `json:"url"`
	Tip     string `json:"tip,omitempty"` // its memory as last fetched; "" before any
	Entries int    `json:"entries"`
}

// SubscriptionSync is what a sync did with one subscription.
type SubscriptionSync struct {
	Name  string `json:"name"`
	URL   string `json:"url"`
	Moved bool   `json:"moved"`           // new memory arrived
	Error string `json:"error,omitempty"` // why it could not be fetched
}

var subNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`) })

// SubscriptionOf is the name of the subscription a memory source (an
// entry's ref) belongs to, or "" when it is not one.
func SubscriptionOf(source string) string {
	rest, ok := strings.CutPrefix(source, subPrefix)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

func subMemoryRef(name string) string { return subPrefix + name + "/memory" }

func subFetchSpec(name string) string { return "+" + sharedPrefix + "*:" + subPrefix + name + "/*" }

// Subscriptions lists this repository's subscriptions by name, with the
// entries of each as last fetched.
func (s *Sharing) Subscriptions(ctx context.Context) ([]Subscription, error) {
	out, err := s.configuredSubscriptions(ctx)
	for i := range out {
		s.readFetched(&out[i])
	}
	return out, err
}

// readFetched fills in sub's memory as last fetched: its tip and entries.
func (s *core) readFetched(sub *Subscription) {
	if h, err := s.log.Tip(subMemoryRef(sub.Name)); err == nil && !h.IsZero() {
		sub.Tip = h.String()
		sub.Entries, _ = s.repo.CountFiles(h, "entries")
	}
}

// configuredSubscriptions lists the subscriptions' names and URLs, by name.
func (s *core) configuredSubscriptions(ctx context.Context) ([]Subscription, error) {
	urls, err := s.repo.ConfigSubsections(ctx, subSection, "url")
	if err != nil {
		return nil, err
	}
	out := make([]Subscription, 0, len(urls))
	for name, url := range urls {
		if !subNameRE().MatchString(name) || strings.HasPrefix(url, "-") {
			s.warnf("ignoring the subscription %q (%s): not a name or URL git-synaptic gives out; remove it with git config --remove-section %s.%s", name, url, subSection, name)
			continue
		}
		out = append(out, Subscription{Name: name, URL: url})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// subscription is the configured subscription name, without its counts.
func (s *core) subscription(ctx context.Context, name string) (Subscription, error) {
	subs, err := s.configuredSubscriptions(ctx)
	if err != nil {
		return Subscription{}, err
	}
	for _, sub := range subs {
		if sub.Name == name {
			return sub, nil
		}
	}
	return Subscription{}, fmt.Errorf("%w %q (see 'git synaptic subscriptions')", ErrNoSubscription, name)
}

// Subscribe makes this repository follow the memory at url under name: it
// fetches it first, so a URL that cannot be read is refused and leaves
// nothing behind.
func (s *Sharing) Subscribe(ctx context.Context, name, url string) (Subscription, error) {
	if !subNameRE().MatchString(name) {
		return Subscription{}, Invalidf("subscription name %q: use letters, digits, - and _ (at most 64, starting with a letter or digit)", name)
	}
	url, err := s.checkSubscriptionURL(ctx, url)
	if err != nil {
		return Subscription{}, err
	}
	if old, err := s.subscription(ctx, name); err == nil {
		return old, Invalidf("already subscribed to %s as %q; 'git synaptic unsubscribe %s' first", old.URL, name, name)
	} else if !errors.Is(err, ErrNoSubscription) {
		return Subscription{}, err
	}
	if err := s.repo.Mirror(ctx, url, subFetchSpec(name)); err != nil {
		s.dropSubscriptionRefs(ctx, name)
		return Subscription{}, fmt.Errorf("subscribe %s: %w", name, err)
	}
	if err := s.refuseOwnMemory(ctx, name, url); err != nil {
		s.dropSubscriptionRefs(ctx, name)
		return Subscription{}, err
	}
	if _, err := s.repo.ConfigSet(ctx, subSection+"."+name+".url", url); err != nil {
		s.dropSubscriptionRefs(ctx, name)
		return Subscription{}, err
	}
	sub := Subscription{Name: name, URL: url}
	if s.readFetched(&sub); sub.Tip == "" {
		s.warnf("%s has no memory yet (no refs/synaptic/*); sync fetches it once it has", url)
	}
	s.conn.refsMoved()
	return sub, nil
}

// checkSubscriptionURL refuses what cannot be a subscription (an option, a
// remote of this repository, the repository itself) and makes a local path
// absolute, so that it means the same from every worktree.
func (s *core) checkSubscriptionURL(ctx context.Context, url string) (string, error) {
	url = strings.TrimSpace(url)
	if url == "" || strings.HasPrefix(url, "-") || strings.ContainsAny(url, "\n\x00") {
		return "", Invalidf("%q is not a repository URL or path", url)
	}
	local, isFileURL := strings.CutPrefix(url, "file://")
	if un, err := neturl.PathUnescape(local); isFileURL && err == nil {
		local = un
	}
	if _, err := os.Stat(local); err == nil {
		abs, err := filepath.Abs(local)
		if err != nil {
			return "", err
		}
		if !isFileURL {
			url = abs
		}
		if same(abs, s.repo.CommonDir()) || same(abs, s.repo.WorkTree()) {
			return "", Invalidf("%s is this repository", url)
		}
	}
	remotes, err := s.repo.Remotes(ctx)
	if err != nil {
		return "", err
	}
	for _, r := range remotes {
		ru := s.repo.RemoteURL(r)
		if ru == "" {
			continue
		}
		if ru == url || same(ru, local) || canonicalURL(ru, s.repo.WorkTree()) == canonicalURL(url, s.repo.WorkTree()) {
			return "", Invalidf("%s is this repository's remote %q, whose memory 'git synaptic sync %s' already shares", url, r, r)
		}
	}
	return url, nil
}

// refuseOwnMemory fails when the memory just fetched for subscription
// name shares history with this repository's own: whatever its URL says,
// it is this project's memory (its origin under another spelling, or a
// mirror), which sync already shares, and subscribing would make the
// project's own entries read-only.
func (s *core) refuseOwnMemory(ctx context.Context, name, url string) error {
	own, err := s.log.Tip(SharedRef)
	if err != nil || own.IsZero() {
		return nil
	}
	theirs, err := s.log.Tip(subPrefix + name + "/memory")
	if err != nil || theirs.IsZero() {
		return nil
	}
	shared, err := s.repo.SharesHistory(ctx, own, theirs)
	if err != nil {
		return err
	}
	if shared {
		return Invalidf("%s holds this project's own memory (it shares its history), which 'git synaptic sync' already shares; subscribe to another project's or the org's memory", url)
	}
	return nil
}

// canonicalURL spells a repository URL one way, so that equivalent
// spellings compare equal: file:// URLs and relative paths become
// absolute paths (relative to dir) without symbolic links, a worktree and
// its .git the same; scp-like addresses become ssh URLs, and the scheme
// and host are lower-cased, the user, a trailing slash and ".git" dropped.
func canonicalURL(u, dir string) string {
	u = strings.TrimSpace(u)
	if p, ok := strings.CutPrefix(u, "file://"); ok {
		if un, err := neturl.PathUnescape(p); err == nil {
			p = un
		}
		u = p
	}
	if !strings.Contains(u, "://") {
		if i := strings.Index(u, ":"); i > 0 && !strings.Contains(u[:i], "/") {
			u = "ssh://" + u[:i] + "/" + strings.TrimPrefix(u[i+1:], "/") // user@host:path
		} else {
			if !filepath.IsAbs(u) {
				u = filepath.Join(dir, u)
			}
			if r, err := filepath.EvalSymlinks(u); err == nil {
				u = r
			}
			return strings.TrimSuffix(filepath.Clean(u), "/.git")
		}
	}
	p, err := neturl.Parse(u)
	if err != nil {
		return u
	}
	path := strings.TrimSuffix(strings.TrimSuffix(p.Path, "/"), ".git")
	return strings.ToLower(p.Scheme) + "://" + strings.ToLower(p.Hostname()) + portOf(p) + path
}

func portOf(p *neturl.URL) string {
	if port := p.Port(); port != "" && !(p.Scheme == "ssh" && port == "22" || p.Scheme == "https" && port == "443") {
		return ":" + port
	}
	return ""
}

// same reports whether two paths name the same existing file.
func same(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// Unsubscribe stops following a subscription and drops its memory from
// this clone (the subscribed repository is untouched).
func (s *Sharing) Unsubscribe(ctx context.Context, name string) (Subscription, error) {
	sub, err := s.subscription(ctx, name)
	if err != nil {
		return sub, err
	}
	if err := s.repo.ConfigRemoveSection(ctx, subSection+"."+name); err != nil {
		return sub, err
	}
	s.conn.refsMoved()
	return sub, s.dropSubscriptionRefs(ctx, name)
}

func (s *core) dropSubscriptionRefs(ctx context.Context, name string) error {
	return s.dropRefs(ctx, subPrefix+name+"/", outboxPrefix+name+"/")
}

// dropRefs deletes every ref under the prefixes.
func (s *core) dropRefs(ctx context.Context, prefixes ...string) error {
	refs, err := s.log.Refs(prefixes...)
	if err != nil {
		return err
	}
	for ref := range refs {
		if err := s.repo.DeleteRef(ctx, ref); err != nil {
			return err
		}
	}
	return nil
}

// SyncSubscriptions fetches every subscription's memory. One that cannot
// be fetched is reported in its result and does not stop the others.
func (s *Sharing) SyncSubscriptions(ctx context.Context) ([]SubscriptionSync, error) {
	subs, err := s.configuredSubscriptions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SubscriptionSync, 0, len(subs))
	for _, sub := range subs {
		r := SubscriptionSync{Name: sub.Name, URL: sub.URL}
		before, _ := s.log.Tip(subMemoryRef(sub.Name))
		if err := s.repo.Mirror(ctx, sub.URL, subFetchSpec(sub.Name)); err != nil {
			r.Error = err.Error()
		} else if after, _ := s.log.Tip(subMemoryRef(sub.Name)); after != before {
			r.Moved = true
			s.conn.refsMoved()
		}
		out = append(out, r)
	}
	return out, nil
}

// SaveTo saves a new entry to a subscription's memory: it fetches that
// memory, adds the entry in a commit on top, and pushes it to the
// subscription's URL, which needs the user's push access there. Only once
// the push succeeded does the local copy move; if another push came first,
// it fetches and tries again.
func (s *Memory) SaveTo(ctx context.Context, name string, req SaveRequest) (memory.Entry, error) {
	if req.Private {
		return memory.Entry{}, Invalidf("a subscription's memory is shared by definition; --private and --to do not go together")
	}
	sub, err := s.subscription(ctx, name)
	if err != nil {
		return memory.Entry{}, err
	}
	req.Duplicates = nil // this repository's ids and commits mean nothing there
	req.Unanchored = true
	e, doc, author, err := s.prepare(ctx, req)
	if err != nil {
		return e, err
	}
	files := []gitstore.File{{Path: memory.EntryPath(e.ID), Data: doc}}
	msg := fmt.Sprintf("save %s %s\n\n%s", e.Type, e.ID, FirstLine(e.Content, 200))
	// The commit is built in refs of this save's own (concurrent saves in
	// this clone would move a shared one under it) and pushed by hash, so
	// the push carries exactly the commit that holds the entry.
	outbox := outboxPrefix + name + "/" + e.ID + "/"
	defer s.dropRefs(context.WithoutCancel(ctx), outbox)
	for attempt := 0; ; attempt++ {
		if err := s.repo.Mirror(ctx, sub.URL, "+"+sharedPrefix+"*:"+outbox+"*"); err != nil {
			return e, fmt.Errorf("save to %s: %w", name, err)
		}
		base, err := s.log.Tip(outbox + "memory")
		if err != nil {
			return e, err
		}
		commit, _, err := s.appendDocs(ctx, outbox+"memory", files, author, msg, req.AllowSecret)
		if err != nil {
			return e, fmt.Errorf("save to %s: %w", name, err)
		}
		err = s.repo.Push(ctx, sub.URL, commit.String()+":"+SharedRef)
		if errors.Is(err, gitstore.ErrPushRejected) && attempt < saveToAttempts {
			// Another writer got there first: fetch theirs and build
			// on it, after a pause that spreads the writers out.
			select {
			case <-ctx.Done():
				return e, ctx.Err()
			case <-time.After(time.Duration(rand.Int64N(int64(50*time.Millisecond) << min(attempt, 5)))):
			}
			continue
		}
		if err != nil {
			return e, fmt.Errorf("save to %s: %w (adding to a subscription needs push access to %s)", name, err, sub.URL)
		}
		s.followSaved(ctx, name, base, commit, e, doc)
		return e, nil
	}
}

// saveToAttempts bounds how many times save --to fetches and pushes again
// when other writers keep moving the subscription's memory.
const saveToAttempts = 10

// followSaved moves the local copy of a subscription to commit, which
// save --to pushed on top of base. Where the local copy was at base, the
// entry is indexed at once; where it lags further, the next command
// indexes the difference; where it moved elsewhere (a fetch in between),
// the next sync brings it.
func (s *core) followSaved(ctx context.Context, name string, base, commit gitstore.Hash, e memory.Entry, doc []byte) {
	mirror := subMemoryRef(name)
	cur, err := s.log.Tip(mirror)
	if err != nil {
		return
	}
	if cur != base {
		if ok, err := s.repo.IsAncestor(ctx, cur, commit); err != nil || !ok {
			return
		}
	}
	if err := s.log.CompareAndSwap(ctx, mirror, commit, cur); err != nil {
		return
	}
	if cur == base {
		s.indexWritten(ctx, mirror, base, commit, func(tx *cache.Tx) error { return tx.PutEntry(e, mirror, false, doc) })
		return
	}
	s.conn.refsMoved()
}

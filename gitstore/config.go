package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/config"
)

// synapticConfig is the synaptic.* section of the configuration and the
// remotes' names, read at once: a command reads several of its keys (the
// prompt hook three, each a git process of about 2 ms). It is read again
// after this Repo writes configuration or ForgetConfig is called, and when
// a file git reads configuration from changes (configStamp). Where the
// configuration includes other files, whose changes the stamps cannot
// see, RecheckConfig reads it again too (a long-lived process calls it for
// each request).
type synapticConfig struct {
	mu       sync.Mutex
	values   map[string][]string // lower-cased key → values, in order
	remotes  []string            // the remotes with a URL, sorted
	stamp    configStamp         // the configuration's files when read
	includes bool                // include or includeIf sections were read
	read     bool
}

// configStamp is what tells that git's configuration may have changed:
// the files git reads it from (system, user, repository and worktree;
// a missing one stamps zero) and the environment that chooses them or
// adds to them.
type configStamp struct {
	files []fileStamp
	env   string
}

func (a configStamp) equal(b configStamp) bool {
	return a.env == b.env && slices.EqualFunc(a.files, b.files, fileStamp.same)
}

// configEnv are the variables that choose git's configuration files or
// add to them (git help config, ENVIRONMENT).
var configEnv = []string{"HOME", "XDG_CONFIG_HOME", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"}

// stampConfig stamps the files git reads configuration from here, and
// the environment that names them.
func (r *Repo) stampConfig() configStamp {
	var env strings.Builder
	for _, k := range configEnv {
		env.WriteString(k + "=" + os.Getenv(k) + "\x00")
	}
	if n, err := strconv.Atoi(os.Getenv("GIT_CONFIG_COUNT")); err == nil {
		for i := range min(n, 1000) {
			env.WriteString(os.Getenv(fmt.Sprintf("GIT_CONFIG_KEY_%d", i)) + "=" + os.Getenv(fmt.Sprintf("GIT_CONFIG_VALUE_%d", i)) + "\x00")
		}
	}
	home, xdg := os.Getenv("HOME"), os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" {
		xdg = filepath.Join(home, ".config")
	}
	paths := []string{"/etc/gitconfig", os.Getenv("GIT_CONFIG_SYSTEM"), os.Getenv("GIT_CONFIG_GLOBAL"), filepath.Join(xdg, "git", "config"),
		filepath.Join(home, ".gitconfig"), filepath.Join(r.commonDir, "config"), filepath.Join(r.gitDir, "config.worktree")}
	st := configStamp{env: env.String(), files: make([]fileStamp, len(paths))}
	for i, p := range paths {
		if p != "" {
			st.files[i] = stampOf(p)
		}
	}
	return st
}

// fileStamp is what tells a file changed: git config writes a new file
// and renames it into place (a new inode, size or time), and a missing
// file stamps zero.
type fileStamp struct {
	size  int64
	mtime time.Time
	inode uint64
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	st := fileStamp{size: fi.Size(), mtime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.inode = uint64(sys.Ino)
	}
	return st
}

// same reports whether two stamps are of the same file, unchanged.
func (a fileStamp) same(b fileStamp) bool {
	return a.size == b.size && a.inode == b.inode && a.mtime.Equal(b.mtime)
}

// localConfig is the repository's own config file as go-git reads it,
// parsed again only when the file changes: a session start asks for the
// remotes' URLs of every other project (about 0.5 ms each to parse).
type localConfig struct {
	mu   sync.Mutex
	cfg  *config.Config // read-only once here
	file fileStamp
}

// local returns the repository's config file, parsed.
func (r *Repo) local() (*config.Config, error) {
	c := &r.localCfg
	c.mu.Lock()
	defer c.mu.Unlock()
	file := stampOf(filepath.Join(r.commonDir, "config"))
	if c.cfg != nil && file.same(c.file) {
		return c.cfg, nil
	}
	cfg, err := r.st.Config()
	if err != nil {
		return nil, err
	}
	c.cfg, c.file = cfg, file
	return cfg, nil
}

// ForgetConfig makes the next read of the synaptic.* configuration ask git.
func (r *Repo) ForgetConfig() {
	r.config.mu.Lock()
	r.config.read = false
	r.config.mu.Unlock()
}

// RecheckConfig makes the next read of the synaptic.* configuration ask
// git where the stamps may miss a change: configuration that includes
// other files. A long-lived process calls it before each request.
func (r *Repo) RecheckConfig() {
	r.config.mu.Lock()
	if r.config.includes {
		r.config.read = false
	}
	r.config.mu.Unlock()
}

// sectionKey reports whether key is a synaptic.* key without subsection,
// lower-cased as git prints it.
func sectionKey(key string) (string, bool) {
	section, name, ok := strings.Cut(key, ".")
	if !ok || !strings.EqualFold(section, "synaptic") || strings.Contains(name, ".") {
		return "", false
	}
	return strings.ToLower(key), true
}

// synapticValues returns the values of a synaptic.* key (lower-cased).
func (r *Repo) synapticValues(ctx context.Context, key string) ([]string, error) {
	c, err := r.readConfig(ctx)
	if err != nil {
		return nil, err
	}
	defer c.mu.Unlock()
	return c.values[key], nil
}

// readConfig returns the configuration snapshot, locked, read again if
// it is stale. The remotes' URLs come with it: a session start asks for
// the remotes of every other project (git remote, about 2 ms each).
func (r *Repo) readConfig(ctx context.Context) (*synapticConfig, error) {
	c := &r.config
	c.mu.Lock()
	stamp := r.stampConfig()
	if c.read && stamp.equal(c.stamp) {
		return c, nil
	}
	out, err := r.run(ctx, nil, nil, "config", "-z", "--get-regexp", `^synaptic\.[^.]*$|^remote\..+\.url$|^include\.|^includeif\.`)
	var ge *GitError
	if err != nil && !(errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) == "") {
		c.mu.Unlock()
		return nil, err // exit 1 with nothing said: none set
	}
	c.values, c.remotes, c.includes = map[string][]string{}, nil, false
	for _, rec := range strings.Split(out, "\x00") {
		if rec == "" {
			continue
		}
		name, value, hasValue := strings.Cut(rec, "\n")
		switch {
		case strings.HasPrefix(name, "include."), strings.HasPrefix(name, "includeif."):
			c.includes = true
			continue
		case strings.HasPrefix(name, "remote."):
			if remote := strings.TrimSuffix(strings.TrimPrefix(name, "remote."), ".url"); !slices.Contains(c.remotes, remote) {
				c.remotes = append(c.remotes, remote)
			}
			continue
		}
		if !hasValue {
			value = "\x00" // "[synaptic] capture" with no value: true
		}
		c.values[name] = append(c.values[name], value)
	}
	slices.Sort(c.remotes) // as git remote lists them
	c.stamp, c.read = stamp, true
	return c, nil
}

// parseBool reads a value as git config --type=bool does.
func parseBool(key, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "\x00", "true", "yes", "on":
		return true, nil
	case "", "false", "no", "off":
		return false, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n != 0, nil
	}
	return false, fmt.Errorf("git config: bad boolean config value '%s' for '%s'", v, key)
}

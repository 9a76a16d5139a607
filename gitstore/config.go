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
	"time"

	"github.com/go-git/go-git/v5/config"
)

// synapticConfig is the synaptic.* section of the configuration and the
// remotes' names, read at once: a command reads several of its keys (the
// prompt hook three, each a git process of about 2 ms). It is read again after this Repo writes
// configuration, after ForgetConfig (a long-lived process calls it for
// each request), and when the repository's config file changes.
type synapticConfig struct {
	mu      sync.Mutex
	values  map[string][]string // lower-cased key → values, in order
	remotes []string            // the remotes with a URL, sorted
	file    fileStamp           // the repository's config file when read
	read    bool
}

// fileStamp is what tells a file changed: git config rewrites the file
// (a new size or time), and a missing file stamps zero.
type fileStamp struct {
	size  int64
	mtime time.Time
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{size: fi.Size(), mtime: fi.ModTime()}
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
	if c.cfg != nil && file.size == c.file.size && file.mtime.Equal(c.file.mtime) {
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
	file := stampOf(filepath.Join(r.commonDir, "config"))
	if c.read && file.size == c.file.size && file.mtime.Equal(c.file.mtime) {
		return c, nil
	}
	out, err := r.run(ctx, nil, nil, "config", "-z", "--get-regexp", `^synaptic\.[^.]*$|^remote\..+\.url$`)
	var ge *GitError
	if err != nil && !(errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) == "") {
		c.mu.Unlock()
		return nil, err // exit 1 with nothing said: none set
	}
	c.values, c.remotes = map[string][]string{}, nil
	for _, rec := range strings.Split(out, "\x00") {
		if rec == "" {
			continue
		}
		name, value, hasValue := strings.Cut(rec, "\n")
		if remote, ok := strings.CutPrefix(name, "remote."); ok {
			if remote = strings.TrimSuffix(remote, ".url"); !slices.Contains(c.remotes, remote) {
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
	c.file, c.read = file, true
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

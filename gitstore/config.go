package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// synapticConfig is the synaptic.* section of the configuration, read at
// once: a command reads several of its keys (the prompt hook three, each a
// git process of about 2 ms). It is read again after this Repo writes
// configuration, after ForgetConfig (a long-lived process calls it for
// each request), and when the repository's config file changes.
type synapticConfig struct {
	mu     sync.Mutex
	values map[string][]string // lower-cased key → values, in order
	file   fileStamp           // the repository's config file when read
	read   bool
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
	c := &r.config
	c.mu.Lock()
	defer c.mu.Unlock()
	file := stampOf(filepath.Join(r.commonDir, "config"))
	if !c.read || file.size != c.file.size || !file.mtime.Equal(c.file.mtime) {
		out, err := r.run(ctx, nil, nil, "config", "-z", "--get-regexp", `^synaptic\.[^.]*$`)
		var ge *GitError
		if err != nil && !(errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) == "") {
			return nil, err // exit 1 with nothing said: none set
		}
		c.values = map[string][]string{}
		for _, rec := range strings.Split(out, "\x00") {
			if rec == "" {
				continue
			}
			name, value, hasValue := strings.Cut(rec, "\n")
			if !hasValue {
				value = "\x00" // "[synaptic] capture" with no value: true
			}
			c.values[name] = append(c.values[name], value)
		}
		c.file, c.read = file, true
	}
	return c.values[key], nil
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

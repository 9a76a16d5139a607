package app

import (
	"sync"
	"time"

	"github.com/git-synaptic/git-synaptic/embed"
)

// The embedding models on this machine, for front ends: installing and
// listing them needs no repository.

// InstalledModel is an embedding model installed on this machine.
type InstalledModel struct {
	Name        string    `json:"name"`
	Dim         int       `json:"dim"`
	SHA256      string    `json:"sha256"` // of its weights
	Source      string    `json:"source"`
	InstalledAt time.Time `json:"installed_at"`
	Dir         string    `json:"-"`
	// CopiedFrom is the per-user install this one was copied from, when
	// installing reused it instead of downloading and converting again.
	CopiedFrom string `json:"-"`
}

// ID is the id vectors are stored under: the name and a digest of the
// weights.
func (m InstalledModel) ID() string { return embed.Installed{Name: m.Name, SHA256: m.SHA256}.ID() }

func installedModel(m embed.Installed) InstalledModel {
	return InstalledModel{Name: m.Name, Dim: m.Dim, SHA256: m.SHA256, Source: m.Source, InstalledAt: m.InstalledAt, Dir: m.Dir, CopiedFrom: m.CopiedFrom}
}

// DefaultModel is the model search uses unless Options.Model names another.
const DefaultModel = embed.DefaultModel

// ModelCatalogue lists the models InstallModel can fetch by name, with a
// line about each.
func ModelCatalogue() map[string]string { return embed.Catalogue() }

// InstallModel installs model name: from a directory or archive when from
// is set, else fetched and converted (python runs the conversion).
func InstallModel(name, from, python string, progress func(done, total int64)) (InstalledModel, error) {
	var m embed.Installed
	var err error
	if from != "" {
		m, err = embed.InstallFrom(from, name, from)
	} else {
		m, err = embed.InstallNamed(name, progress, python)
	}
	return installedModel(m), err
}

// InstallORT installs ONNX Runtime's library and returns its path, and the
// per-user copy it reused ("" when it downloaded the library).
func InstallORT(progress func(done, total int64)) (lib, copiedFrom string, err error) {
	return embed.InstallORT(progress)
}

// InstalledModels lists the models installed on this machine.
func InstalledModels() ([]InstalledModel, error) {
	list, err := embed.List()
	out := make([]InstalledModel, len(list))
	for i, m := range list {
		out[i] = installedModel(m)
	}
	return out, err
}

// ORTLibrary is the path of the ONNX Runtime library search would use, or
// "" when there is none (the pure-Go runtime runs instead).
func ORTLibrary() string { return embed.FindORTLibrary() }

// ModelInstalled reports whether model name ("" for DefaultModel) is
// installed, so that a command knows there is a model to keep warm.
func ModelInstalled(name string) bool {
	if name == "" {
		name = DefaultModel
	}
	_, err := embed.Find(name)
	return err == nil
}

// WarmModels are the embedding models a long-lived process (the warm
// process) keeps loaded for every Service it opens, by model directory,
// weights and runtime. Load is an Options.LoadEmbedder. It is safe for
// concurrent use; Close unloads them all.
type WarmModels struct {
	mu     sync.Mutex
	loaded map[string]*embed.Model
}

// Load returns model name for backend, loaded once, with the errors
// loading it in place would give.
func (w *WarmModels) Load(name, backend string) (Embedder, error) {
	m, err := embed.Find(name)
	if err != nil {
		return nil, err
	}
	key := m.Dir + "\x00" + m.SHA256 + "\x00" + backend
	w.mu.Lock()
	defer w.mu.Unlock()
	if x := w.loaded[key]; x != nil {
		return x, nil
	}
	x, err := embed.Load(m, embed.Options{Backend: backend})
	if err != nil {
		return nil, err
	}
	if w.loaded == nil {
		w.loaded = map[string]*embed.Model{}
	}
	w.loaded[key] = x
	return x, nil
}

// Close unloads every model.
func (w *WarmModels) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, m := range w.loaded {
		m.Close()
		delete(w.loaded, k)
	}
}

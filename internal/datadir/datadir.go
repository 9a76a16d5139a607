// Package datadir locates git-synaptic's per-user data (the embedding
// models and ONNX Runtime's library) without loading either, for the
// front end that only needs to know whether a model is there.
package datadir

import (
	"os"
	"path/filepath"
)

// DefaultModel is the embedding model search uses unless
// $GIT_SYNAPTIC_MODEL (or synaptic.model) names another.
const DefaultModel = "use-lite"

// Dir is the per-user directory for models and the ONNX Runtime library:
// $GIT_SYNAPTIC_HOME, else User.
func Dir() string {
	if d := os.Getenv("GIT_SYNAPTIC_HOME"); d != "" {
		return d
	}
	return User()
}

// User is Dir without $GIT_SYNAPTIC_HOME, where install.sh puts this
// user's model: $XDG_DATA_HOME/git-synaptic, else
// ~/.local/share/git-synaptic.
func User() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "git-synaptic")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "git-synaptic")
	}
	return filepath.Join(home, ".local", "share", "git-synaptic")
}

// Manifest is the manifest.json of the model named name in Dir's models.
func Manifest(name string) string {
	return filepath.Join(Dir(), "models", name, "manifest.json")
}

package app

import "github.com/git-synaptic/git-synaptic/embed"

// The embedding models on this machine, for front ends: installing and
// listing them needs no repository.

// InstalledModel is an embedding model installed on this machine.
type InstalledModel = embed.Installed

// DefaultModel is the model search uses unless Options.Model names another.
const DefaultModel = embed.DefaultModel

// ModelCatalogue lists the models InstallModel can fetch by name, with a
// line about each.
func ModelCatalogue() map[string]string { return embed.Catalogue() }

// InstallModel installs model name: from a directory or archive when from
// is set, else fetched and converted (python runs the conversion).
func InstallModel(name, from, python string, progress func(done, total int64)) (InstalledModel, error) {
	if from != "" {
		return embed.InstallFrom(from, name, from)
	}
	return embed.InstallNamed(name, progress, python)
}

// InstallORT installs ONNX Runtime's library and returns its path, and the
// per-user copy it reused ("" when it downloaded the library).
func InstallORT(progress func(done, total int64)) (lib, copiedFrom string, err error) {
	return embed.InstallORT(progress)
}

// InstalledModels lists the models installed on this machine.
func InstalledModels() ([]InstalledModel, error) { return embed.List() }

// ORTLibrary is the path of the ONNX Runtime library search would use, or
// "" when there is none (the pure-Go runtime runs instead).
func ORTLibrary() string { return embed.FindORTLibrary() }

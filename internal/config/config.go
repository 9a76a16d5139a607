// Package config is what the build and the environment configure, read in
// one place for both programs (git-synaptic and git-synaptic-mcp): the
// version, the application options the environment sets, and the exit code
// each of the application's errors maps to. The application itself never
// reads the environment for these.
package config

import (
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/git-synaptic/git-synaptic/internal/app"
)

// CPUProfile starts a Go CPU profile into $GIT_SYNAPTIC_CPUPROFILE, when
// it names a file (for performance work), and returns what stops it.
func CPUProfile() (stop func()) {
	p := os.Getenv("GIT_SYNAPTIC_CPUPROFILE")
	if p == "" {
		return func() {}
	}
	f, err := os.Create(p)
	if err != nil {
		return func() {}
	}
	pprof.StartCPUProfile(f)
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// Version is set at build time with -ldflags "-X .../internal/config.Version=...".
var Version = "dev"

// FromEnv adds to opts what the environment configures: the agent
// session and agent ids saves carry ($GIT_SYNAPTIC_SESSION,
// $GIT_SYNAPTIC_AGENT), the embedding model ($GIT_SYNAPTIC_MODEL) and its
// runtime ($GIT_SYNAPTIC_EMBED_BACKEND), the code checks
// ($GIT_SYNAPTIC_CODE_CHECKS=off), and the user's project list
// ($GIT_SYNAPTIC_PROJECTS: a file, or "off"; else in $XDG_DATA_HOME or
// ~/.local/share).
func FromEnv(opts app.Options) app.Options {
	switch p := os.Getenv("GIT_SYNAPTIC_PROJECTS"); p {
	case "off":
	case "":
		opts.Projects = app.DefaultProjectList() // none without a home
	default:
		opts.Projects, _ = filepath.Abs(p)
	}
	opts.Session = os.Getenv("GIT_SYNAPTIC_SESSION")
	opts.Agent = os.Getenv("GIT_SYNAPTIC_AGENT")
	opts.Model = os.Getenv("GIT_SYNAPTIC_MODEL")
	opts.EmbedBackend = os.Getenv("GIT_SYNAPTIC_EMBED_BACKEND")
	opts.NoCodeChecks = os.Getenv("GIT_SYNAPTIC_CODE_CHECKS") == "off"
	return opts
}

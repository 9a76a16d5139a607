// Command git-synaptic is a git extension that gives coding agents and their
// humans a shared, searchable project memory stored in git refs. Installed
// on PATH, it runs as `git synaptic ...`.
//
// This program is small, to start fast: it hands searches, saves and agent
// hooks to the warm process and runs every other command in
// git-synaptic-core, the whole program installed beside it
// (internal/frontend/forward).
package main

import (
	"os"

	"github.com/git-synaptic/git-synaptic/internal/frontend/forward"
)

func main() { os.Exit(forward.Main()) }

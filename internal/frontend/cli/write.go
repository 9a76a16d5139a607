package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/memory"
)

// readContent takes text from arguments, a file (-F FILE) or stdin (-F -,
// or no argument with stdin not a terminal).
func readContent(e *env, args []string, file string) (string, error) {
	switch {
	case file != "" && len(args) > 0:
		return "", usagef("give the content as an argument or with -F, not both")
	case file == "-":
		return readLimited(e.io.In, "stdin")
	case file != "":
		f, err := os.Open(e.path(file))
		if err != nil {
			return "", usagef("cannot read %s: %v", file, err)
		}
		defer f.Close()
		return readLimited(f, file)
	case len(args) > 0:
		return strings.Join(args, " "), nil
	}
	if f, ok := e.io.In.(*os.File); ok && isTerminal(f) {
		return "", usagef("no content: give it as an argument, with -F FILE, or on stdin")
	}
	return readLimited(e.io.In, "stdin")
}

// readLimited reads at most a little over the content limit, so a huge
// input is refused without being held in memory.
func readLimited(r io.Reader, name string) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, memory.MaxContentBytes+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > memory.MaxContentBytes {
		return "", memory.Invalidf("content from %s is over the %d-byte (64 KiB) limit; save a summary and a reference instead", name, memory.MaxContentBytes)
	}
	return string(b), nil
}

type saveOptions struct {
	typ, tier, file  string
	tags, related    []string
	pin, private     bool
	allowSecret, js  bool
	session, agentID string
	to               string
	id               string // the warm process's retry key (saveIDFlag)
	args             []string
}

func newSave(e *env) *cobra.Command {
	o := &saveOptions{}
	c := &cobra.Command{
		Use:   "save [CONTENT...]",
		Short: "Save a memory entry and print its id",
		Long: `Save a memory entry. The content comes from the arguments, from a file
(-F FILE), or from stdin (-F -, or piped). Shared entries are refused when
they look like a credential; --private entries stay in this clone.`,
		Example: `  git synaptic save "we chose postgres for billing: we need transactions" --type decision --tag db --tag billing
  git synaptic save -F notes.md --type reference --tier longterm --pin
  echo "flaky: TestSync times out on CI under load" | git synaptic save --type issue
  git synaptic save --private "staging db password is in 1password, vault 'ops'"
  git synaptic save --to org --type rule "never pin a base image by tag alone"`,
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error { return runSave(e, o) })
		},
	}
	fl := c.Flags()
	fl.StringVarP(&o.typ, "type", "t", "insight", "entry `type`: decision, progress, issue, handoff, insight, reference, rule")
	fl.StringArrayVar(&o.tags, "tag", nil, "add a `tag` (repeatable)")
	fl.StringVar(&o.tier, "tier", "", "set the `tier` (ephemeral, working, longterm; default by type)")
	fl.BoolVar(&o.pin, "pin", false, "pin the entry (immune to decay)")
	fl.BoolVar(&o.private, "private", false, "keep it in this clone only (private memory in .git/synaptic/private.git, never pushed)")
	fl.BoolVar(&o.allowSecret, "allow-secret", false, "save even if the content looks like a credential")
	fl.StringVarP(&o.file, "file", "F", "", "read the content from `file` (- for stdin)")
	fl.StringArrayVar(&o.related, "related", nil, "link a related entry `id` (repeatable)")
	fl.StringVar(&o.session, "session", "", "agent session `id` (default $GIT_SYNAPTIC_SESSION)")
	fl.StringVar(&o.agentID, "agent", "", "agent `id` (default $GIT_SYNAPTIC_AGENT)")
	fl.BoolVar(&o.js, "json", false, "print the saved entry as JSON")
	fl.StringVar(&o.to, "to", "", "save to the subscription `name`'s memory, pushed there at once (needs push access; see git synaptic subscribe)")
	fl.StringVar(&o.id, saveIDFlag, "", "the new entry's `id`; a save of the same content under an id already saved prints that entry")
	fl.MarkHidden(saveIDFlag) // for the warm process's retries (viaDaemon), not people
	return c
}

// saveIDFlag names save's hidden flag for the new entry's id: a save sent
// to the warm process carries one, so that the same save run again in
// place, when the process ended under it, cannot save twice.
const saveIDFlag = "id"

// saveLine reads a save command line (the arguments after "save") as save
// would: ok when it may run in the warm process (its flags parse, which
// --help, added by cobra later, does not; and it does not push: --to
// waits on a remote and may ask for credentials on the terminal), stdin
// when its content comes from standard input.
func saveLine(args []string) (ok, stdin bool) {
	c := newSave(&env{})
	if err := c.ParseFlags(args); err != nil {
		return false, false
	}
	fl := c.Flags()
	to, _ := fl.GetString("to")
	file, _ := fl.GetString("file")
	return to == "", len(fl.Args()) == 0 && (file == "" || file == "-")
}

func runSave(e *env, o *saveOptions) error {
	typ, err := memory.ParseType(o.typ)
	if err != nil {
		return usageError{err}
	}
	var tier memory.Tier
	if o.tier != "" {
		if tier, err = memory.ParseTier(o.tier); err != nil {
			return usageError{err}
		}
	}
	content, err := readContent(e, o.args, o.file)
	if err != nil {
		return err
	}
	if o.to != "" {
		if o.id != "" {
			return usagef("--%s and --to do not go together", saveIDFlag)
		}
		return saveTo(e, o, app.SaveRequest{Content: content, Type: typ, Tags: o.tags, Tier: tier, Pinned: o.pin,
			Private: o.private, AllowSecret: o.allowSecret, Related: o.related, SessionID: o.session, AgentID: o.agentID})
	}
	return e.withService(func(s *app.Service) error {
		saved, err := s.Memory().SaveLinked(contextOf(e), app.SaveRequest{ID: o.id, Content: content, Type: typ, Tags: o.tags, Tier: tier, Pinned: o.pin,
			Private: o.private, AllowSecret: o.allowSecret, Related: o.related, SessionID: o.session, AgentID: o.agentID}, app.ByWords)
		if err != nil {
			return err
		}
		ent := saved.Entry
		for _, d := range saved.Duplicates {
			fmt.Fprintf(e.io.Err, "note: near-duplicate of %s (%s similarity %.2f): %s; saved anyway and %s\n", app.ShortID(d.ID), d.How, d.Similarity, app.FirstLine(d.Content, 60), linkedNote(saved.Linked(d.ID)))
		}
		if o.js {
			return writeJSON(e.io.Out, ent)
		}
		fmt.Fprintln(e.io.Out, ent.ID)
		return nil
	})
}

// linkedNote says whether a save linked its entry to a near-duplicate.
func linkedNote(linked bool) string {
	if linked {
		return "linked to it"
	}
	return "not linked to it (it is private memory and this entry is shared)"
}

func newPin(e *env, pin bool) *cobra.Command {
	use, short := "pin ID...", "Pin entries: immune to decay and archiving"
	if !pin {
		use, short = "unpin ID...", "Unpin entries"
	}
	o := &markOptions{mark: "pin", on: pin}
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Example: "  git synaptic " + strings.Fields(use)[0] + " 3f2a9c1d",
		Args:    minArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.ids = args
			return e.run(o, func() error { return runMark(e, o) })
		},
	}
}

func newArchive(e *env, archive bool) *cobra.Command {
	use, short := "archive ID...", "Archive entries: they leave search and list, history keeps them"
	if !archive {
		use, short = "unarchive ID...", "Bring archived entries back"
	}
	o := &markOptions{mark: "archive", on: archive}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Example: "  git synaptic " + strings.Fields(use)[0] + " 3f2a9c1d 77b0e5aa\n" +
			"  git synaptic list --archived",
		Args: minArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.ids = args
			return e.run(o, func() error { return runMark(e, o) })
		},
	}
}

// markOptions are pin, unpin, archive and unarchive's.
type markOptions struct {
	mark string // pin or archive
	on   bool
	ids  []string
}

func runMark(e *env, o *markOptions) error {
	return eachID(e, o.ids, func(s *app.Service, id string) (memory.Op, error) {
		if o.mark == "pin" {
			return s.Memory().SetPinned(contextOf(e), id, o.on)
		}
		return s.Memory().SetArchived(contextOf(e), id, o.on)
	})
}

// eachID applies f to every id, reporting each; it fails if any failed
// (the error of one id alone is the command's, not told twice).
func eachID(e *env, ids []string, f func(*app.Service, string) (memory.Op, error)) error {
	return e.withService(func(s *app.Service) error {
		var firstErr error
		for _, id := range ids {
			op, err := f(s, id)
			if err != nil && len(ids) == 1 {
				return err
			}
			if err != nil {
				fmt.Fprintf(e.io.Err, "git-synaptic: %s: %v\n", id, err)
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			fmt.Fprintf(e.io.Out, "%s %s\n", op.Kind, op.Entry)
		}
		if firstErr != nil {
			return fmt.Errorf("some entries were not changed: %w", firstErr)
		}
		return nil
	})
}

type editOptions struct {
	message, file, typ, tier string
	addTags, removeTags      []string
	allowSecret              bool
	id                       string
	hasMessage               bool // -m given, perhaps empty
}

func newEdit(e *env) *cobra.Command {
	o := &editOptions{}
	c := &cobra.Command{
		Use:   "edit ID",
		Short: "Change an entry's content, type, tags or tier (recorded as history)",
		Long: `Record an edit of an entry. The original and every edit stay in the memory
ref's history. With no change flags, the content opens in your editor
(GIT_EDITOR, core.editor, VISUAL, EDITOR).`,
		Example: `  git synaptic edit 3f2a9c1d -m "we chose postgres 16 for billing"
  git synaptic edit 3f2a --add-tag db --remove-tag wip
  git synaptic edit 3f2a --tier longterm
  git synaptic edit 3f2a            # opens your editor`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.id, o.hasMessage = args[0], c.Flags().Changed("message")
			return e.run(o, func() error { return runEdit(e, o) })
		},
	}
	fl := c.Flags()
	fl.StringVarP(&o.message, "message", "m", "", "new content")
	fl.StringVarP(&o.file, "file", "F", "", "read new content from `file` (- for stdin)")
	fl.StringVarP(&o.typ, "type", "t", "", "new `type`")
	fl.StringVar(&o.tier, "tier", "", "set the `tier` explicitly")
	fl.StringArrayVar(&o.addTags, "add-tag", nil, "add a `tag` (repeatable)")
	fl.StringArrayVar(&o.removeTags, "remove-tag", nil, "remove a `tag` (repeatable)")
	fl.BoolVar(&o.allowSecret, "allow-secret", false, "accept content that looks like a credential")
	return c
}

func runEdit(e *env, o *editOptions) error {
	req := app.EditRequest{AddTags: o.addTags, RemoveTags: o.removeTags, AllowSecret: o.allowSecret}
	if o.typ != "" {
		t, err := memory.ParseType(o.typ)
		if err != nil {
			return usageError{err}
		}
		req.Type = t
	}
	var tier memory.Tier
	if o.tier != "" {
		t, err := memory.ParseTier(o.tier)
		if err != nil {
			return usageError{err}
		}
		tier = t
	}
	switch {
	case o.hasMessage && o.file != "":
		return usagef("give new content with -m or -F, not both")
	case o.hasMessage:
		req.Content = &o.message
	case o.file != "":
		text, err := readContent(e, nil, o.file)
		if err != nil {
			return err
		}
		req.Content = &text
	}
	return e.withService(func(s *app.Service) error {
		ctx := contextOf(e)
		noEdit := req.Content == nil && req.Type == "" && len(req.AddTags) == 0 && len(req.RemoveTags) == 0
		if noEdit && tier == "" {
			d, err := s.Recall().Show(ctx, o.id)
			if err != nil {
				return err
			}
			text, err := editInEditor(e, s.Editor(ctx), d.Content)
			if err != nil {
				return err
			}
			if text == d.Content {
				fmt.Fprintln(e.io.Err, "no change")
				return nil
			}
			req.Content, noEdit = &text, false
		}
		if !noEdit {
			op, err := s.Memory().Edit(ctx, o.id, req)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.io.Out, "edit %s\n", op.Entry)
		}
		if tier != "" {
			op, err := s.Memory().SetTier(ctx, o.id, tier)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.io.Out, "tier %s %s\n", op.Tier, op.Entry)
		}
		return nil
	})
}

// editInEditor lets the user edit content in ed (a shell command).
func editInEditor(e *env, ed, content string) (string, error) {
	dir, err := os.MkdirTemp("", "synaptic-edit")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "ENTRY.md")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		return "", err
	}
	cmd := exec.Command("sh", "-c", ed+` "$@"`, ed, p)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, unwrapped(e.io.Out), unwrapped(e.io.Err)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("editor %q failed: %w", ed, err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

type feedbackOptions struct {
	relevant          bool
	score             float64
	reason, objective string
	args              []string
}

func newFeedback(e *env, relevant bool) *cobra.Command {
	o := &feedbackOptions{relevant: relevant}
	use, short := "irrelevant ID", "Mark an entry irrelevant: it ranks lower and stays out of agents' context"
	example := `  git synaptic irrelevant 3f2a9c1d --reason "about the old billing system"`
	if relevant {
		use, short = "relevant ID", "Mark an entry relevant: it ranks higher, does not decay, and stays in full in agents' context above 0.8"
		example = `  git synaptic relevant 3f2a9c1d --score 0.9 --objective "payment retries" --reason "explains the backoff"`
	}
	c := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error { return runFeedback(e, o) })
		},
	}
	if relevant {
		c.Flags().Float64Var(&o.score, "score", 1, "how relevant, above 0 and at most 1")
	}
	c.Flags().StringVar(&o.reason, "reason", "", "why")
	c.Flags().StringVar(&o.objective, "objective", "", "the task it is (ir)relevant to")
	return c
}

func runFeedback(e *env, o *feedbackOptions) error {
	if o.relevant && (o.score <= 0 || o.score > 1) {
		return usagef("--score must be above 0 and at most 1")
	}
	return e.withService(func(s *app.Service) error {
		op, err := s.Memory().Feedback(contextOf(e), o.args[0], o.relevant, o.score, o.reason, o.objective)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.io.Out, "%s %s\n", op.Kind, op.Entry)
		return nil
	})
}

type deleteOptions struct {
	purge bool
	args  []string
}

func newDelete(e *env) *cobra.Command {
	o := &deleteOptions{}
	c := &cobra.Command{
		Use:   "delete ID...",
		Short: "Delete entries: archive them (history keeps them), or --purge them from history",
		Long: `Without --purge, delete is archive: the entries leave search, list and agents'
context, and git history keeps them (unarchive brings them back).

--purge removes them for good: the entry and every operation on it are cut
out of the memory ref's whole history (commits are rewritten; authors, dates
and messages kept) and a tombstone naming the removed files, not their
content, is committed. Any clone that merges the tombstone cuts the same
files out of its own history, and 'git synaptic sync' then replaces the
remote's history (git push --force-with-lease). Until git gc prunes them, the
objects stay in .git/objects of each clone; run
'git reflog expire --expire=now --all && git gc --prune=now' to drop them
now. Use it for content that must not be shared, such as a leaked secret.`,
		Example: `  git synaptic delete 3f2a9c1d
  git synaptic delete 3f2a9c1d --purge && git synaptic sync`,
		Args: minArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error { return runDelete(e, o) })
		},
	}
	c.Flags().BoolVar(&o.purge, "purge", false, "rewrite the memory history without the entries (see above)")
	return c
}

func runDelete(e *env, o *deleteOptions) error {
	if !o.purge {
		return eachID(e, o.args, func(s *app.Service, id string) (memory.Op, error) {
			return s.Memory().SetArchived(contextOf(e), id, true)
		})
	}
	return e.withService(func(s *app.Service) error {
		stones, err := s.Memory().Purge(contextOf(e), o.args)
		for _, t := range stones {
			fmt.Fprintf(e.io.Out, "purged %s (%d files cut from history); run 'git synaptic sync' to purge it from the remote\n", app.ShortID(t.ID), len(t.Paths))
		}
		return err
	})
}

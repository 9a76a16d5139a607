package app

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/secrets"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Everything that becomes shared passes here: appendDocs is the one place
// where memory documents are written to a ref, and a shared ref (pushed to
// remotes) takes a document only when
//   - no string in it, whatever the field (content, tags, session and agent
//     ids, feedback reasons, ...), looks like a credential, unless the user
//     allowed it for this write, and then a warning names what was found;
//   - it links to no private entry (a private id must not travel either).
// Derived writes (handoffs, rules from corrections, near-duplicate links)
// go through the same path, so they cannot carry private or secret text
// out by another way.

// isShared reports whether ref is pushed with memory, here or (save --to)
// to a subscription.
func isShared(ref string) bool {
	return strings.HasPrefix(ref, sharedPrefix) || ref == gitstore.NotesRef || strings.HasPrefix(ref, outboxPrefix)
}

// appendDocs writes files (encoded documents) to ref in one commit, after
// the checks above, and returns the new commit and its parent.
func (s *core) appendDocs(ctx context.Context, ref string, files []gitstore.File, author, msg string, allowSecret bool) (commit, parent gitstore.Hash, err error) {
	if isShared(ref) {
		fields, related, err := documentFields(files)
		if err != nil {
			return commit, parent, err
		}
		fields = append(fields, secrets.Field{Name: "commit message", Text: msg})
		if err := s.checkShareable(fields, allowSecret, secretHint); err != nil {
			return commit, parent, err
		}
		if err := s.refusePrivateLinks(ctx, related); err != nil {
			return commit, parent, err
		}
	}
	ctx = gitstore.WithGCNotice(ctx, func() {
		s.warnf("waiting for the git gc running here to end before confirming this write: git gc --prune=now may delete what was just written, and it is written again if so")
	})
	return s.log.Append(ctx, ref, files, gitstore.ParseIdent(author, s.now()), msg)
}

// checkShareable refuses fields that look like credentials, saying what
// to do instead (hint), or with allowSecret warns about them.
func (s *core) checkShareable(fields []secrets.Field, allowSecret bool, hint string) error {
	found := secrets.ScanFields(fields)
	if len(found) == 0 {
		return nil
	}
	if !allowSecret {
		return fmt.Errorf("%w; %s", secrets.Error(found), hint)
	}
	s.warnf("storing what looks like a credential in shared memory, which is pushed to your remotes (--allow-secret): %s", secrets.Describe(found))
	return nil
}

// checkAsGiven scans names (tags, labels) as the user gave them, before
// lower-casing hides a credential's pattern (AKIA… becomes akia…, which
// the scan of the stored document no longer recognises).
func (s *core) checkAsGiven(field string, values []string, allowSecret bool) error {
	fields := make([]secrets.Field, len(values))
	for i, v := range values {
		fields[i] = secrets.Field{Name: field, Text: v}
	}
	return s.checkShareable(fields, allowSecret, "a "+field+" is a label pushed with the entry; leave the credential out, or pass --allow-secret if it is not a real credential")
}

// documentFields lists every string in the documents by field name, and
// the entry ids they link to.
func documentFields(files []gitstore.File) (fields []secrets.Field, related []string, err error) {
	for i, f := range files {
		var doc map[string]any
		if err := json.Unmarshal(f.Data, &doc); err != nil {
			return nil, nil, fmt.Errorf("check %s: %w", f.Path, err)
		}
		name := ""
		if len(files) > 1 {
			name = fmt.Sprintf("entry %d", i+1) // as import numbers them
		}
		collectStrings(name, doc, &fields)
		if ids, ok := doc["related_ids"].([]any); ok {
			for _, id := range ids {
				if s, ok := id.(string); ok {
					related = append(related, s)
				}
			}
		}
	}
	return fields, related, nil
}

func collectStrings(name string, v any, out *[]secrets.Field) {
	switch v := v.(type) {
	case string:
		*out = append(*out, secrets.Field{Name: name, Text: v})
	case []any:
		for _, x := range v {
			collectStrings(name, x, out)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			n := k
			if name != "" {
				n = name + " " + k
			}
			collectStrings(n, v[k], out)
		}
	}
}

// refusePrivateLinks fails when any id names a private entry.
func (s *core) refusePrivateLinks(ctx context.Context, ids []string) error {
	for _, id := range ids {
		if s.isPrivate(ctx, id) {
			return memory.Invalidf("entry %s is private; shared memory cannot link to it (its id would be pushed): save this one with --private, or leave the link out", short(id))
		}
	}
	return nil
}

// isPrivate reports whether id is an entry of the private memory.
func (s *core) isPrivate(ctx context.Context, id string) bool {
	private := false
	s.withCache(ctx, func(c *cache.Cache) error {
		d, err := detailIn(ctx, c, id)
		private = err == nil && d.Entry.Private
		return nil
	})
	return private
}

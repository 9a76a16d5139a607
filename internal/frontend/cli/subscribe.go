package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-synaptic/git-synaptic/internal/app"
)

type subscribeOptions struct {
	json bool
	args []string
}

func newSubscribe(e *env) *cobra.Command {
	o := &subscribeOptions{}
	return withJSON(&cobra.Command{
		Use:   "subscribe NAME URL",
		Short: "Follow another repository's memory, read-only (an org-wide memory repository)",
		Long: `Follow the memory of the repository at URL (any URL or path git can fetch)
under NAME. Its memory (refs/synaptic/* there) is fetched now into
refs/synaptic-sub/NAME/* here, and again by every 'git synaptic sync'. It is
searched and shown at session start with "subscription NAME" as its
provenance, and it is never pushed from here: to change it, work in that
repository, or add an entry with 'git synaptic save --to NAME', which pushes
it there with your own access.

The subscription is kept in this clone's git config
(synaptic-subscription.NAME.url). A URL that cannot be read is refused.`,
		Example: `  git synaptic subscribe org git@github.com:acme/memory.git
  git synaptic subscribe platform ../platform-memory
  git synaptic search "base image"        # finds the org's rules too
  git synaptic save --to org --type rule "pin base images by digest"`,
		Args: exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error {
				return e.withService(func(s *app.Service) error {
					sub, err := s.Sharing().Subscribe(contextOf(e), o.args[0], e.localURL(o.args[1]))
					if err != nil {
						return err
					}
					if o.json {
						return writeJSON(e.io.Out, sub)
					}
					fmt.Fprintf(e.io.Out, "subscribed to %s as %s: %d entries\n", sub.URL, sub.Name, sub.Entries)
					return nil
				})
			})
		},
	}, &o.json)
}

func newUnsubscribe(e *env) *cobra.Command {
	o := &subscribeOptions{}
	return &cobra.Command{
		Use:   "unsubscribe NAME",
		Short: "Stop following a subscription and drop its memory from this clone",
		Long: `Stop following the subscription NAME: its config section and its fetched
memory (refs/synaptic-sub/NAME/*) are removed here. The subscribed repository
is untouched.`,
		Example: "  git synaptic unsubscribe org",
		Args:    exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error {
				return e.withService(func(s *app.Service) error {
					sub, err := s.Sharing().Unsubscribe(contextOf(e), o.args[0])
					if err != nil {
						return err
					}
					fmt.Fprintf(e.io.Out, "unsubscribed from %s (%s)\n", sub.Name, sub.URL)
					return nil
				})
			})
		},
	}
}

func newSubscriptions(e *env) *cobra.Command {
	o := &subscribeOptions{}
	return withJSON(&cobra.Command{
		Use:     "subscriptions",
		Short:   "List the repositories whose memory this one follows",
		Example: "  git synaptic subscriptions\n  git synaptic subscriptions --json",
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error {
				return e.withService(func(s *app.Service) error {
					subs, err := s.Sharing().Subscriptions(contextOf(e))
					if err != nil {
						return err
					}
					if o.json {
						return writeJSON(e.io.Out, subs)
					}
					if len(subs) == 0 {
						fmt.Fprintln(e.io.Out, "no subscriptions: git synaptic subscribe NAME URL follows another repository's memory")
					}
					for _, sub := range subs {
						fmt.Fprintf(e.io.Out, "%-16s %6d entries  %s\n", sub.Name, sub.Entries, sub.URL)
					}
					return nil
				})
			})
		},
	}, &o.json)
}

// saveTo is save --to NAME.
func saveTo(e *env, o *saveOptions, req app.SaveRequest) error {
	if o.private {
		return usageError{errors.New("--private and --to do not go together: a subscription's memory is shared")}
	}
	return e.withService(func(s *app.Service) error {
		ent, err := s.Memory().SaveTo(contextOf(e), o.to, req)
		if err != nil {
			return err
		}
		if o.js {
			return writeJSON(e.io.Out, ent)
		}
		fmt.Fprintln(e.io.Out, ent.ID)
		return nil
	})
}

// syncSubscriptions fetches every subscription after the sync of this
// repository's own memory, whatever came of that; it reports each one
// that failed, and fails itself if any did.
func syncSubscriptions(e *env, s *app.Service, rep *syncReport) error {
	subs, err := s.Sharing().SyncSubscriptions(contextOf(e))
	if err != nil {
		return err
	}
	rep.Subscriptions = subs
	var failed []string
	for _, sub := range subs {
		if sub.Error != "" {
			failed = append(failed, sub.Name)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("could not fetch the memory of subscription %s (see above); this repository's own memory was synced", strings.Join(failed, ", "))
	}
	return nil
}

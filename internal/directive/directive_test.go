package directive

import (
	"testing"

	"github.com/git-synaptic/git-synaptic/memory"
)

// Directives are found by their words (the model-free path): the seed's
// own templates, 20 phrasings of standing instructions, and 20 sentences
// that must not count.
func TestDirectives(t *testing.T) {
	directives := []string{
		// the seed's templates
		"I prefer this approach instead",
		"please remember to do this going forward",
		"Always use this pattern.",
		"Never do that again.",
		"Stop doing that.",
		"That's wrong, it should be the other way.",
		// realistic phrasings
		"From now on, use pnpm instead of npm.",
		"Don't use mocks for the database tests, hit a real Postgres.",
		"Please always run go vet before you commit.",
		"Never push directly to main.",
		"Stop adding comments that restate the code.",
		"I prefer table-driven tests over separate test functions.",
		"Going forward, put new handlers under internal/api.",
		"That's wrong: the config lives in config.yaml, not in env vars.",
		"No, use the existing retry helper rather than writing a new one.",
		"Remember to update the changelog when you bump the version.",
		"Make sure every exported function has a doc comment.",
		"Avoid adding new dependencies without asking me first.",
		"Do not edit the generated files under gen/.",
		"You should use errors.Is instead of comparing error strings.",
		"In the future, ask before deleting any migration.",
		"Next time, run the linter before saying you're done.",
		"We'd rather keep the API backwards compatible, so don't rename fields.",
		"Please stop using fmt.Println for logging; use slog.",
		"Keep in mind that the staging database is shared.",
		"Use tabs, not spaces, in the Makefile from now on.",
	}
	plain := []string{
		"The build failed because the cache directory was full.",
		"We chose Postgres for billing because we need transactions.",
		"TestSync times out on CI under load.",
		"Never mind, the flaky test passed on rerun.",
		"The retry loop always gives up after five attempts.",
		"I don't know why the cache misses on the first request.",
		"Fixed the race in the worker pool by adding a mutex.",
		"The server stops accepting connections when the pool is exhausted.",
		"Users prefer the dark theme according to the survey.",
		"Refactored the export job into three stages.",
		"The handler returns 404 when the id is unknown.",
		"Deployed version 2.3 to staging at 14:00.",
		"Remember when the migration broke production? It was the index.",
		"The docs say to run make before make install.",
		"Investigated the memory leak: it was an unclosed response body.",
		"Half way through the export refactor, tests still red.",
		"The API never returns null for lists, only empty arrays.",
		"Why does the linter complain about this import?",
		"Added a benchmark for the tokenizer, using the reference vectors.",
		"Should we use gRPC or plain HTTP for the internal API?",
	}
	for _, d := range directives {
		if !Is(d, memory.TypeInsight) {
			t.Errorf("missed directive: %q", d)
		}
	}
	for _, p := range plain {
		if Is(p, memory.TypeInsight) {
			t.Errorf("not a directive, but taken for one: %q", p)
		}
	}
}

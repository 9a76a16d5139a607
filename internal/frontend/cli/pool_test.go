package cli

import (
	"io"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// The warm process keeps one Session per repository: the agent hooks
// (which wait little for another process's cache write) and searches
// (which wait longer) share it, its cache and what the cache holds in
// memory, each request with its own wait.
func TestPoolOneSessionPerRepository(t *testing.T) {
	dir := testrepo.NewRepo(t)
	pool := &sessionPool{models: &app.WarmModels{}}
	defer pool.close()
	var got []*app.Session
	for _, busy := range []time.Duration{hookBusy, 0} {
		e := &env{io: IO{Out: io.Discard, Err: io.Discard}, dir: dir, busy: busy}
		s, err := pool.get(e.dir, e.options())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if got[0] != got[1] || len(pool.open) != 1 {
		t.Fatalf("a hook and a search opened %d Sessions of one repository", len(pool.open))
	}
}

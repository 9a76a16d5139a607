package memlog_test

import (
	"testing"

	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/memlog"
	"github.com/git-synaptic/git-synaptic/internal/memlog/memlogtest"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

func TestMain(m *testing.M) { testrepo.Main(m) }

func TestGitStore(t *testing.T) {
	memlogtest.Run(t, func(t *testing.T) memlog.Store {
		r, err := gitstore.Open(testrepo.NewRepo(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	})
}

func TestMemory(t *testing.T) {
	memlogtest.Run(t, func(*testing.T) memlog.Store { return memlog.NewMemory() })
}

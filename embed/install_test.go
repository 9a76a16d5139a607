package embed_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/git-synaptic/git-synaptic/embed"
)

func TestInstallFromRejectsBadInput(t *testing.T) {
	t.Setenv("GIT_SYNAPTIC_HOME", t.TempDir())
	empty := t.TempDir()
	if _, err := embed.InstallFrom(empty, "x", "test"); err == nil {
		t.Error("empty folder installed")
	}
	junk := filepath.Join(t.TempDir(), "junk.tar.gz")
	os.WriteFile(junk, []byte("not gzip"), 0o644)
	if _, err := embed.InstallFrom(junk, "x", "test"); err == nil {
		t.Error("junk archive installed")
	}
	if _, err := embed.InstallFrom(empty, "../evil", "test"); err == nil {
		t.Error("path in name accepted")
	}
	if list, _ := embed.List(); len(list) != 0 {
		t.Errorf("failed installs left %v", list)
	}
}

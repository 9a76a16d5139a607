package embed

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Only the user's own install, converted from the same download and with
// model.onnx still matching its manifest, is reused by another home.
func TestConvertedCopyNeedsTheSameSourceAndChecksum(t *testing.T) {
	user := t.TempDir()
	t.Setenv("XDG_DATA_HOME", user)
	t.Setenv("GIT_SYNAPTIC_HOME", t.TempDir())
	dir := filepath.Join(user, "git-synaptic", "models", "use-lite")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(onnx, source string) {
		sum := sha256.Sum256([]byte("weights"))
		m := Installed{Name: "use-lite", Dim: 512, SHA256: hex.EncodeToString(sum[:]), Source: source}
		data, _ := json.Marshal(m)
		os.WriteFile(filepath.Join(dir, "manifest.json"), data, 0o644)
		os.WriteFile(filepath.Join(dir, "model.onnx"), []byte(onnx), 0o644)
	}
	cases := []struct {
		onnx, source string
		want         bool
	}{
		{"weights", useLiteWeights.URL, true},
		{"tampered", useLiteWeights.URL, false},
		{"weights", "https://example.com/other.tgz", false},
	}
	for _, c := range cases {
		write(c.onnx, c.source)
		if got, ok := convertedCopy("use-lite", useLiteWeights.URL); ok != c.want || (ok && got != dir) {
			t.Errorf("model.onnx %q from %s: reused %v (%s), want %v", c.onnx, c.source, ok, got, c.want)
		}
	}
	t.Setenv("GIT_SYNAPTIC_HOME", filepath.Join(user, "git-synaptic"))
	write("weights", useLiteWeights.URL)
	if _, ok := convertedCopy("use-lite", useLiteWeights.URL); ok {
		t.Error("the install reused itself")
	}
	t.Setenv("GIT_SYNAPTIC_HOME", t.TempDir())
	os.RemoveAll(filepath.Join(user, "git-synaptic"))
	if _, ok := convertedCopy("use-lite", useLiteWeights.URL); ok {
		t.Error("reused a copy that does not exist")
	}
}

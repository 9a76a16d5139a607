//go:build model

// Tests of the installed model itself (tokenizer, both runtimes). They need
// 'make model' and run with -tags model, as 'make test' does; without the
// tag, go test ./embed runs only what needs no model.

package embed_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/embed"
	_ "github.com/git-synaptic/git-synaptic/embed/purego" // the pure-Go runtime in process
)

type reference struct {
	Single []struct {
		Text string    `json:"text"`
		IDs  []int64   `json:"ids"`
		Emb  []float32 `json:"emb"`
	} `json:"single"`
	Batch [][]float32 `json:"batch"`
}

func loadReference(t *testing.T) reference {
	t.Helper()
	data, err := os.ReadFile("testdata/use-lite-reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// installedModel returns the model 'make model' installed. Tests fail,
// never skip, without it.
func installedModel(t *testing.T) embed.Installed {
	t.Helper()
	m, err := embed.Find(embed.DefaultModel)
	if err != nil {
		t.Fatalf("%v; run 'make model' (GIT_SYNAPTIC_HOME=%q)", err, os.Getenv("GIT_SYNAPTIC_HOME"))
	}
	return m
}

func TestTokenizerMatchesReference(t *testing.T) {
	m := installedModel(t)
	tok, err := embed.LoadTokenizer(filepath.Join(m.Dir, "tokenizer.json"), embed.MaxTokens)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range loadReference(t).Single {
		got := tok.Encode(s.Text)
		if !equalIDs(got, s.IDs) {
			t.Errorf("Encode(%q) = %v, want %v", s.Text, got, s.IDs)
		}
	}
	long := tok.Encode(string(make([]byte, 0)) + repeat("word ", 500))
	if len(long) != embed.MaxTokens {
		t.Errorf("long text: %d tokens, want the cap %d", len(long), embed.MaxTokens)
	}
	for _, bad := range []string{"", "\xff\xfe", "\x00", "🚀🚀🚀"} {
		_ = tok.Encode(bad) // must not panic
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBackendsMatchOriginal checks both runtimes against vectors written by
// the TF.js original: one at a time and as a padded batch.
func TestBackendsMatchOriginal(t *testing.T) {
	m := installedModel(t)
	ref := loadReference(t)
	for _, backend := range []string{"go", "ort"} {
		t.Run(backend, func(t *testing.T) {
			if backend == "ort" && embed.FindORTLibrary() == "" {
				t.Fatal("ONNX Runtime library not installed; run 'make model'")
			}
			model, err := embed.Load(m, embed.Options{Backend: backend})
			if err != nil {
				t.Fatal(err)
			}
			defer model.Close()
			if model.Backend() != backend || model.Dim() != 512 {
				t.Fatalf("backend %s dim %d", model.Backend(), model.Dim())
			}
			texts := make([]string, len(ref.Single))
			for i, s := range ref.Single {
				texts[i] = s.Text
			}
			got, err := model.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range ref.Single {
				if c := embed.Cosine(got[i], s.Emb); c < 0.9999 {
					t.Errorf("%q: cosine to the original %.6f", s.Text, c)
				}
			}
			one, err := model.Embed(context.Background(), texts[:1])
			if err != nil {
				t.Fatal(err)
			}
			if c := embed.Cosine(one[0], ref.Batch[0]); c < 0.9999 {
				t.Errorf("single vs batch: cosine %.6f", c)
			}
			// sanity: paraphrase closer than unrelated
			if embed.Cosine(got[0], got[1]) <= embed.Cosine(got[0], got[2]) {
				t.Errorf("paraphrase %.3f not above unrelated %.3f", embed.Cosine(got[0], got[1]), embed.Cosine(got[0], got[2]))
			}
		})
	}
}

// TestGoBackendNoHang guards against the gomlx executor deadlock seen with
// several small independent matmuls: many batch shapes, concurrently.
func TestGoBackendNoHang(t *testing.T) {
	m := installedModel(t)
	model, err := embed.Load(m, embed.Options{Backend: "go"})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, n := range []int{1, 2, 5, 8, 13, 32, 40} {
					texts := make([]string, n)
					for i := range texts {
						texts[i] = repeat("memory ", 1+(i*7+w)%40)
					}
					if _, err := model.Embed(context.Background(), texts); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("pure-Go backend hung")
	}
}

// An install into another home (make test's GIT_SYNAPTIC_HOME) copies the
// user's install, converted from the same download with its checksum
// intact, instead of downloading and converting again (the python given
// does not exist and a download fails the test).
func TestInstallReusesTheUsersCopy(t *testing.T) {
	m := installedModel(t)
	lib := embed.FindORTLibrary()
	if lib == "" {
		t.Fatal("no ONNX Runtime library installed; run 'make model'")
	}
	user := t.TempDir()
	userModel := filepath.Join(user, "git-synaptic", "models", m.Name)
	copyTree(t, m.Dir, userModel)
	copyTree(t, filepath.Dir(lib), filepath.Join(user, "git-synaptic", "lib"))
	t.Setenv("XDG_DATA_HOME", user)
	t.Setenv("GIT_SYNAPTIC_HOME", t.TempDir())
	noDownload := func(done, total int64) { t.Fatal("downloaded instead of reusing the user's copy") }

	got, err := embed.InstallNamed(m.Name, noDownload, "/nonexistent/python3")
	if err != nil {
		t.Fatal(err)
	}
	if got.CopiedFrom != userModel || got.SHA256 != m.SHA256 {
		t.Errorf("installed %+v, want a copy of %s with digest %s", got, userModel, m.SHA256)
	}
	if _, from, err := embed.InstallORT(noDownload); err != nil || from == "" {
		t.Errorf("ONNX Runtime: copied from %q, err %v; want the user's copy", from, err)
	}

}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

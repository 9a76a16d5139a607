package bench

import (
	"bufio"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"
)

// BenchmarkWeb100k times each page of git synaptic web over 100k entries,
// as a browser on this machine would fetch it (server time plus the
// loopback round trip): median of 20 fetches each, after one warm-up.
// BENCH_SCALE=small runs it at 10k.
func BenchmarkWeb100k(b *testing.B) {
	dir := repoWith(b, scale(100000))
	id, _ := run(b, dir, "save", "--type", "insight", "--tag", "correction", "always run go vet before pushing")
	id = id[:32]
	run(b, dir, "embed") // as memory is once the hooks and searches have embedded it
	cmd := exec.Command(bin, "web", "--port", "0")
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	url := regexp.MustCompile(`http://[^ ]+\?token=[0-9a-f]+`).FindString(line)
	base := regexp.MustCompile(`http://[^/]+`).FindString(url)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	get := func(path string) time.Duration {
		start := time.Now()
		resp, err := c.Get(path)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if resp.StatusCode != 200 {
			b.Fatalf("%s: %d", path, resp.StatusCode)
		}
		return d
	}
	get(url)
	pages := []struct{ name, path string }{
		{"timeline", "/"},
		{"timeline-filtered", "/?type=issue&tag=deploy"},
		{"timeline-page-2", "/?before=" + time.Now().Add(-30*24*time.Hour).UTC().Format(time.RFC3339Nano)},
		{"search-bm25", "/search?q=flaky+timeout+retry&mode=bm25"},
		{"search-explain", "/search?q=deploy+rollback+helm&explain=1"},
		{"entry", "/entry/" + id},
		{"rules", "/rules"},
		{"code", "/code?file=README.md"},
		{"status", "/status"},
	}
	for _, p := range pages {
		get(base + p.path)
	}
	for _, p := range pages {
		var ds []time.Duration
		for range 20 {
			ds = append(ds, get(base+p.path))
		}
		b.ReportMetric(ms(median(ds)), "ms/"+p.name)
	}
}

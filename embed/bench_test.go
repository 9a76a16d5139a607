//go:build model

package embed_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/embed"
	_ "github.com/git-synaptic/git-synaptic/embed/purego" // the pure-Go runtime in process
)

// BenchmarkBackends reports, for each runtime, the model load time, the
// throughput at batch 32 on memory-sized sentences (about 25 tokens) and
// the latency of one short query (make bench).
func BenchmarkBackends(b *testing.B) {
	m, err := embed.Find(embed.DefaultModel)
	if err != nil {
		b.Fatalf("%v; run 'make model'", err)
	}
	texts := make([]string, 96)
	for i := range texts {
		texts[i] = fmt.Sprintf("the %d-th retry of the billing worker hit a timeout while the postgres migration %s was running", i, strings.Repeat("again ", i%5))
	}
	for _, backend := range []string{"ort", "go"} {
		b.Run(backend, func(b *testing.B) {
			start := time.Now()
			model, err := embed.Load(m, embed.Options{Backend: backend})
			if err != nil {
				b.Fatal(err)
			}
			defer model.Close()
			load := time.Since(start)
			n := len(texts)
			if backend == "go" {
				n = 32 // about 2 s of work at the pure-Go rate
			}
			ctx := context.Background()
			model.Embed(ctx, texts[:1]) // first call compiles (Go) or warms (ORT)
			start = time.Now()
			if _, err := model.Embed(ctx, texts[:n]); err != nil {
				b.Fatal(err)
			}
			rate := float64(n) / time.Since(start).Seconds()
			var qs []time.Duration
			for i := 0; i < 15; i++ {
				start = time.Now()
				model.Embed(ctx, []string{"why did we choose redis for the session cache"})
				qs = append(qs, time.Since(start))
			}
			b.ReportMetric(float64(load.Milliseconds()), "ms/load")
			b.ReportMetric(rate, "sentences/s")
			b.ReportMetric(float64(median(qs).Microseconds())/1000, "ms/query-median")
		})
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

package cache

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

// TestSignIndexMatchesSqliteVec: the first stage, reading sqlite-vec's
// shadow tables itself, finds the rows sqlite-vec's own KNN finds at the
// same distances, across chunks, after vectors replaced in older chunks
// and added to newer ones; a Cache that read the chunks before holds what
// one reading them afresh does.
func TestSignIndexMatchesSqliteVec(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	var entries []memory.Entry
	for i := 0; i < 2600; i++ { // three of sqlite-vec's chunks of 1024
		typ := memory.TypeInsight
		if i%5 == 0 { // a filter that admits few
			typ = memory.TypeDecision
		}
		entries = append(entries, mk(typ, fmt.Sprintf("entry %d", i), time.Hour))
	}
	put(t, c, entries)
	const dim = 72 // a tail byte past the 64-bit words
	if err := c.UseModel(ctx, "m@1", dim); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = rng.Float32() - 0.5
		}
		return v
	}
	store := func(items []PendingText) {
		t.Helper()
		vecs := make([][]float32, len(items))
		for i := range vecs {
			vecs[i] = vec()
		}
		if err := c.StoreVectors(ctx, items, vecs); err != nil {
			t.Fatal(err)
		}
	}
	pending, _, err := c.PendingVectors(ctx, 3000)
	if err != nil || len(pending) != len(entries) {
		t.Fatalf("%d pending, %v", len(pending), err)
	}
	check := func(when string) {
		t.Helper()
		for n := 0; n < 5; n++ {
			q := vec()
			var sqlQB []byte
			if err := c.db.QueryRowContext(ctx, `SELECT vec_quantize_binary(?)`, encodeVec(q)).Scan(&sqlQB); err != nil {
				t.Fatal(err)
			}
			if qb := quantize(q); !bytes.Equal(qb, sqlQB) {
				t.Fatalf("quantize %x, sqlite-vec %x", qb, sqlQB)
			}
			ids, err := coarseIDs(ctx, c, q, 50, all)
			if err != nil || len(ids) != 50 {
				t.Fatalf("%s: %d candidates, %v", when, len(ids), err)
			}
			near := c.signs.hamming(sqlQB, 50, nil, nil, false)
			slices.SortFunc(near, func(a, b signDist) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.id, b.id)) })
			rows, err := c.db.QueryContext(ctx, `SELECT rowid, distance FROM vec_bits WHERE e MATCH vec_quantize_binary(?) AND k = 50`, encodeVec(q))
			if err != nil {
				t.Fatal(err)
			}
			dist := map[int64]float64{}
			var dists []float64
			for rows.Next() {
				var id int64
				var d float64
				if err := rows.Scan(&id, &d); err != nil {
					t.Fatal(err)
				}
				dist[id] = d
				dists = append(dists, d)
			}
			rows.Close()
			last := dists[len(dists)-1]
			for i, s := range near {
				d, ok := dist[s.id]
				switch {
				case float64(s.d) != dists[i]:
					t.Fatalf("%s: %d-th at distance %d, sqlite-vec's at %v", when, i, s.d, dists[i])
				case !ok && dists[i] < last: // only a tie at the edge may differ
					t.Fatalf("%s: %d-th (rowid %d) not among sqlite-vec's", when, i, s.id)
				case ok && d != dists[i]:
					t.Fatalf("%s: rowid %d at distance %v, %v here", when, s.id, d, dists[i])
				}
			}
			var filtered [2][]int64
			for i, typ := range []memory.Type{memory.TypeInsight, memory.TypeDecision} {
				if filtered[i], err = coarseIDs(ctx, c, q, 50, Filter{Types: []memory.Type{typ}}); err != nil || len(filtered[i]) != 50 {
					t.Fatalf("%s: %d %ss, %v", when, len(filtered[i]), typ, err)
				}
			}
			// the decisions (a fifth) scanned alone, each found by its
			// rowid (sparse), rather than in a whole scan
			sparse := sparseScan
			sparseScan = 0
			alone, err := coarseIDs(ctx, c, q, 50, Filter{Types: []memory.Type{memory.TypeDecision}})
			sparseScan = sparse
			if err != nil || fmt.Sprint(alone) != fmt.Sprint(filtered[1]) {
				t.Fatalf("%s: decisions scanned alone %v (%v), in a whole scan %v", when, alone, err, filtered[1])
			}
			kept := c.signs
			c.signs, c.admits = nil, admitted{} // what another process holds
			afresh, err := coarseIDs(ctx, c, q, 50, all)
			if err != nil || fmt.Sprint(afresh) != fmt.Sprint(ids) {
				t.Fatalf("%s: read afresh %v (%v), kept %v", when, afresh, err, ids)
			}
			for i, typ := range []memory.Type{memory.TypeDecision, memory.TypeInsight} { // the other order
				got, err := coarseIDs(ctx, c, q, 50, Filter{Types: []memory.Type{typ}})
				if err != nil || fmt.Sprint(got) != fmt.Sprint(filtered[1-i]) {
					t.Fatalf("%s: %ss read afresh %v (%v), kept %v", when, typ, got, err, filtered[1-i])
				}
			}
			if len(kept.chunks) != len(c.signs.chunks) {
				t.Fatalf("%s: kept %d chunks, afresh %d", when, len(kept.chunks), len(c.signs.chunks))
			}
		}
	}
	store(pending[:1500])
	check("two chunks")
	kept := c.signs // read afresh by check's last query
	store(pending[1500:])
	store(pending[10:400]) // replaced: cleared in the first chunk, written to the newest
	check("three chunks")  // its first query with kept, brought up to date
	if len(kept.chunks) != 3 || kept.gen != c.signs.gen {
		t.Fatalf("the kept index holds %d chunks of generation %s, want 3 of %s", len(kept.chunks), kept.gen, c.signs.gen)
	}
}

// The in-memory index scans only the rows a filter admits, however far
// they lie from the query; a row admitted since (a new entry) is scanned
// at the next search, one archived since is not.
func TestInMemoryIndexScansWhatTheFilterAdmits(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	rng := rand.New(rand.NewSource(2))
	q := make([]float32, 16)
	for i := range q {
		q[i] = rng.Float32() - 0.5
	}
	near := func(sign float32) []float32 {
		v := make([]float32, 16)
		for i := range v {
			v[i] = sign*q[i] + (rng.Float32()-0.5)/10
		}
		return v
	}
	var entries []memory.Entry
	for i := 0; i < 60; i++ {
		entries = append(entries, mk(memory.TypeInsight, fmt.Sprintf("insight %d", i), time.Hour))
	}
	for i := 0; i < 3; i++ {
		entries = append(entries, mk(memory.TypeDecision, fmt.Sprintf("decision %d", i), time.Hour))
	}
	put(t, c, entries)
	if err := c.UseModel(ctx, "m@1", 16); err != nil {
		t.Fatal(err)
	}
	store := func() {
		t.Helper()
		pending, _, _ := c.PendingVectors(ctx, 100)
		vecs := make([][]float32, len(pending))
		for i, p := range pending {
			vecs[i] = near(1) // insights next to the query
			if strings.HasPrefix(p.Text, "decision") {
				vecs[i] = near(-1) // decisions as far as can be
			}
		}
		if err := c.StoreVectors(ctx, pending, vecs); err != nil {
			t.Fatal(err)
		}
	}
	store()
	decisions := func(want int) {
		t.Helper()
		hits, err := c.Nearest(ctx, q, Filter{Types: []memory.Type{memory.TypeDecision}}, 10)
		if err != nil || len(hits) != want {
			t.Fatalf("%d decisions found, want %d (%v)", len(hits), want, err)
		}
		w, args := Filter{Types: []memory.Type{memory.TypeDecision}}.admitting()
		_, key, err := c.sampleShare(ctx, w, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		admit, err := c.admitted(ctx, key, w, args)
		if err != nil {
			t.Fatal(err)
		}
		ids := c.signs.nearest(q, 5, admit, nil, false)
		if len(ids) != want {
			t.Fatalf("the index scanned %d rows for 5 candidates among %d admitted", len(ids), want)
		}
		for _, id := range ids {
			var typ string
			c.db.QueryRowContext(ctx, `SELECT type FROM entries WHERE rowid=?`, id).Scan(&typ)
			if typ != string(memory.TypeDecision) {
				t.Errorf("candidate %d is a %s", id, typ)
			}
		}
	}
	// a filter that admits most rows needs no set: the nearest of all,
	// the rows it rejects left out afterwards
	c.admits = admitted{}
	hits, err := c.Nearest(ctx, q, Filter{Types: []memory.Type{memory.TypeInsight}}, 10)
	if err != nil || len(hits) != 10 || len(c.admits.sets) != 0 {
		t.Fatalf("insights: %d hits, %v, %d sets built", len(hits), err, len(c.admits.sets))
	}
	for _, h := range hits {
		if h.Type != memory.TypeInsight {
			t.Fatalf("a %s among the insights", h.Type)
		}
	}
	decisions(3)
	put(t, c, []memory.Entry{mk(memory.TypeDecision, "decision 3", time.Minute)})
	store()
	decisions(4)
	// an archived decision is no longer admitted
	put(t, c, nil, memory.Op{V: 1, ID: memory.NewID(), Entry: entries[60].ID, Kind: memory.OpArchive, Clock: 1, At: time.Now().UTC()})
	decisions(3)
}

// Two filters whose values run together alike ("ab" + "c", "a" + "bc")
// each get the rows they admit.
func TestInMemoryIndexTellsFiltersApart(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	one, two := mk(memory.TypeInsight, "one", time.Hour), mk(memory.TypeInsight, "two", time.Hour)
	one.Project, one.Branch = "ab", "c"
	two.Project, two.Branch = "a", "bc"
	put(t, c, []memory.Entry{one, two})
	if err := c.UseModel(ctx, "m@1", 8); err != nil {
		t.Fatal(err)
	}
	pending, _, _ := c.PendingVectors(ctx, 10)
	vecs := [][]float32{{1, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0, 0, 0}}
	if err := c.StoreVectors(ctx, pending, vecs[:len(pending)]); err != nil {
		t.Fatal(err)
	}
	for _, e := range []memory.Entry{one, two} {
		hits, err := c.Nearest(ctx, []float32{1, 1, 0, 0, 0, 0, 0, 0}, Filter{Project: e.Project, Branch: e.Branch}, 5)
		if err != nil || len(hits) != 1 || hits[0].ID != e.ID {
			t.Errorf("project %q branch %q: %d hits %v", e.Project, e.Branch, len(hits), err)
		}
	}
}

// TestSignIndexSeesTheTableMadeAgain: another process switching models
// away and back makes vec_bits again, its chunks numbered from 1 again; a
// Cache that held the old chunks reads the new ones, not its own.
func TestSignIndexSeesTheTableMadeAgain(t *testing.T) {
	ctx := context.Background()
	c, p := newCache(t)
	var entries []memory.Entry
	for i := 0; i < 1100; i++ { // two chunks: the first one's validity alone is read again
		entries = append(entries, mk(memory.TypeInsight, fmt.Sprintf("entry %d", i), time.Hour))
	}
	put(t, c, entries)
	rng := rand.New(rand.NewSource(2))
	storeAll := func(c *Cache, model string) {
		t.Helper()
		if err := c.UseModel(ctx, model, 16); err != nil {
			t.Fatal(err)
		}
		pending, _, _ := c.PendingVectors(ctx, 2000)
		vecs := make([][]float32, len(pending))
		for i := range vecs {
			vecs[i] = make([]float32, 16)
			for j := range vecs[i] {
				vecs[i][j] = rng.Float32() - 0.5
			}
		}
		slices.Reverse(pending) // the first time: other rows in each chunk than when restored in order
		if err := c.StoreVectors(ctx, pending, vecs); err != nil {
			t.Fatal(err)
		}
	}
	storeAll(c, "m@1")
	q := []float32{1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1}
	if _, err := coarseIDs(ctx, c, q, 20, all); err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"m@2", "m@1"} { // the other process, once for each
		other, _, err := Open(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		storeAll(other, model)
		other.Close()
	}
	got, err := coarseIDs(ctx, c, q, 20, all)
	if err != nil {
		t.Fatal(err)
	}
	c.signs = nil
	want, err := coarseIDs(ctx, c, q, 20, all)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("held %v, read afresh %v (%v)", got, want, err)
	}
}

// coarseIDs is the rows coarse finds, in order.
func coarseIDs(ctx context.Context, c *Cache, q []float32, k int, f Filter) ([]int64, error) {
	vq, err := c.planNearest(ctx, f, k, nearestPool(k), 0)
	if err != nil {
		return nil, err
	}
	vq.k = k
	vq.rank(q)
	scored, _, err := c.coarse(ctx, vq, q)
	ids := make([]int64, len(scored))
	for i, s := range scored {
		ids[i] = s.rowid
	}
	return ids, err
}

// A large index scanned in parts by several goroutines (signScan) keeps
// the rows one scan in order keeps, whoever joins it and when: the
// nearest first, ties to the lower rowid, rows without a vector and rows
// the filter rejects left out.
func TestHammingInPartsKeepsWhatOneScanKeeps(t *testing.T) {
	for _, p := range hammingPaths() {
		t.Run(p.name, func(t *testing.T) {
			defer p.use()()
			testHammingInParts(t)
		})
	}
}

// hammingPath is a way to measure the distances this CPU runs: the Go
// loop, and hamming.c's where it runs them.
type hammingPath struct {
	name  string
	fast  bool
	level int
}

func hammingPaths() []hammingPath {
	paths := []hammingPath{{"go", false, hammingLevel}}
	if hammingLevel >= 1 {
		paths = append(paths, hammingPath{"popcnt", true, 1})
	}
	if hammingLevel >= 2 {
		paths = append(paths, hammingPath{"avx-512", true, 2})
	}
	return paths
}

// use makes the path the one scans take, until the function it returns.
func (p hammingPath) use() func() {
	fast, level := hammingFast, hammingLevel
	hammingFast, hammingLevel = p.fast, p.level
	return func() { hammingFast, hammingLevel = fast, level }
}

func testHammingInParts(t *testing.T) {
	const perChunk, chunks = 1024, 2*parallelRows/1024 + 3
	rng := rand.New(rand.NewSource(5))
	ix := &signIndex{width: 64, nw: 8}
	type row struct {
		id int64
		d  int
	}
	var rows []row
	every := map[int64]int{} // every row with a vector, by rowid: its distance
	q, qw := randomQuery(ix, rng)
	admit := make([]uint64, (chunks*perChunk)/64+1)
	for ci := range chunks {
		n := perChunk
		if ci%2 == 1 { // chunks of odd length: distances8 scans rows in pairs
			n = perChunk - 1 - ci%5
		}
		ch := signChunk{id: int64(ci), valid: make([]byte, (n+7)/8), rowids: make([]byte, 8*n), words: make([]uint64, 8*n)}
		for i := range n {
			// rowids falling through each chunk, as a restore's order
			// leaves them: rows at the cut are not read lowest first
			id := int64(ci*perChunk + n - i)
			binary.LittleEndian.PutUint64(ch.rowids[8*i:], uint64(id))
			d := 0
			for j := range 8 {
				// few distinct distances: many ties at the cut
				ch.words[8*i+j] = qw[j] ^ (uint64(1)<<rng.Intn(3) - 1)
				d += bits.OnesCount64(ch.words[8*i+j] ^ qw[j])
			}
			if rng.Intn(10) > 0 { // a tenth have no vector
				ch.valid[i/8] |= 1 << (i % 8)
				every[id] = d
			} else {
				continue
			}
			if rng.Intn(4) > 0 { // a quarter the filter rejects
				admit[id/64] |= 1 << (id % 64)
				rows = append(rows, row{id, d})
			}
		}
		ix.chunks = append(ix.chunks, ch)
		ix.place(ci)
	}
	// every row's distance and the count at each distance, exactly
	starts := []int{0}
	for _, ch := range ix.chunks {
		starts = append(starts, starts[len(starts)-1]+len(ch.rowids)/8)
	}
	dist, count := make([]uint16, starts[len(starts)-1]), make([]int, 8*64+1)
	// measured scans with admit and checks every row's distance (skip for
	// a row want does not hold) and the count at each distance
	measured := func(name string, admit []uint64, want map[int64]int) {
		t.Helper()
		clear(count)
		ix.distances(dist, starts, 0, len(ix.chunks), qw, admit, count)
		wantCount := make([]int, len(count))
		for _, d := range want {
			wantCount[d]++
		}
		if !slices.Equal(count, wantCount) {
			t.Fatalf("%s: rows counted at each distance: %v, want %v", name, count, wantCount)
		}
		for ci, ch := range ix.chunks {
			for i := range len(ch.rowids) / 8 {
				w, ok := want[ch.rowid(i)]
				if got := dist[starts[ci]+i]; ok && int(got) != w || !ok && got != skip {
					t.Fatalf("%s: row %d: distance %d, want %d (measured: %v)", name, ch.rowid(i), got, w, ok)
				}
			}
		}
	}
	byID := map[int64]int{}
	for _, r := range rows {
		byID[r.id] = r.d
	}
	measured("the rows the filter admits", admit, byID)
	// without a filter, rows in groups of eight are measured eight at once
	// (hamming.c's GROUP), those without vectors skipped after
	measured("every row", nil, every)
	slices.SortFunc(rows, func(a, b row) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.id, b.id)) })
	joinLate := func(s *signScan) { // as a search waiting for its lanes
		go func() {
			time.Sleep(50 * time.Microsecond)
			s.join()
		}()
	}
	var after *signScan
	joinAfter := func(s *signScan) { after = s } // when it is over
	offers := map[string]func(*signScan){"alone": nil, "on every core": spreadScan, "joined late": joinLate, "joined after": joinAfter}
	// a set that admits few rows: each is found by its rowid (sparse)
	few := slices.Clone(admit)
	var fewRows []row
	for _, r := range rows {
		if r.id%41 == 0 {
			fewRows = append(fewRows, r)
		} else {
			few[r.id/64] &^= 1 << (r.id % 64)
		}
	}
	for _, k := range []int{1, 5, 50, len(fewRows) - 1, len(fewRows) + 5} {
		got := ix.hamming(q, k, few, spreadScan, false)
		var want []signDist
		for _, r := range fewRows[:min(k, len(fewRows))] {
			p := ix.at[r.id]
			want = append(want, signDist{r.d, r.id, int(p >> slotBits), int(p & (1<<slotBits - 1))})
		}
		slices.SortFunc(got, func(a, b signDist) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.id, b.id)) })
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("a few rows admitted, k=%d: %d kept, want %d (first %v… and %v…)", k, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
		}
	}
	for name, offer := range offers {
		// k at many points of the distances' distribution: a wrong count of
		// the rows at a distance moves the cut at some of them
		for _, k := range []int{1, 2, 5, 10, 20, 50, 100, 150, 200, 300, 500, 800, 1200, 1600, 2500, 4000, 8000, 16000, len(rows) + 5} {
			got := ix.hamming(q, k, admit, offer, false)
			if after != nil {
				after.join()
				if after.next.Load() < int64(len(ix.chunks)) || len(after.counts) != 0 {
					t.Fatalf("a scan joined after its end: %d parts taken, %d workers", after.next.Load(), len(after.counts))
				}
				after = nil
			}
			ids := make([]int64, len(got))
			for i, g := range got {
				ids[i] = g.id
			}
			slices.Sort(ids)
			var want []int64
			for _, r := range rows[:min(k, len(rows))] {
				want = append(want, r.id)
			}
			slices.Sort(want)
			if !slices.Equal(ids, want) {
				t.Fatalf("%s, k=%d: %d rows kept, want %d (first difference among %v… and %v…)", name, k, len(ids), len(want), ids[:min(5, len(ids))], want[:min(5, len(want))])
			}
		}
	}
}

// TestByDotOrdersAsPairsDo: byDot's integer keys order ids as sorting
// (dot, id) pairs does, highest dot first and ties to the lower id, with
// negative dots, zeros of both signs and many ties.
func TestByDotOrdersAsPairsDo(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, n := range []int{0, 1, 2, 7, 1600} {
		dots := make([]float32, n)
		ids := make([]int64, n)
		for i := range dots {
			dots[i] = float32(rng.Intn(41)-20) / 4 // ties, both signs
			if rng.Intn(10) == 0 {
				dots[i] = float32(math.Copysign(0, -1))
			}
			ids[i] = rng.Int63n(1 << 40)
		}
		type pair struct {
			dot float32
			id  int64
		}
		want := make([]pair, n)
		for i := range want {
			want[i] = pair{dots[i], ids[i]}
		}
		slices.SortFunc(want, func(a, b pair) int { return cmp.Or(cmp.Compare(b.dot, a.dot), cmp.Compare(a.id, b.id)) })
		got := byDot(dots, ids)
		for i := range want {
			if got[i] != want[i].id {
				t.Fatalf("n=%d: place %d holds %d, want %d (dot %v)", n, i, got[i], want[i].id, want[i].dot)
			}
		}
	}
}

// A near-duplicate check's scan reads a large index's first words first,
// then the whole bits of the rows nearest by those (signhead.go): it keeps
// the rows that lie near the query, as a whole scan would, leaving out
// those the filter does not admit or that hold no vector, on every path.
func TestHeadFirstKeepsWhatLiesNear(t *testing.T) {
	defer func(rows, keep int) { headRows, headKeep = rows, keep }(headRows, headKeep)
	headRows, headKeep = 1000, 512
	for _, p := range hammingPaths() {
		t.Run(p.name, func(t *testing.T) {
			defer p.use()()
			testHeadFirst(t)
		})
	}
}

// An index of rows narrower than the default model's (three words: 192
// bits) is read first words first too, its distances counted in Go.
func TestHeadFirstReadsNarrowRows(t *testing.T) {
	defer func(rows, keep int) { headRows, headKeep = rows, keep }(headRows, headKeep)
	headRows, headKeep = 100, 64
	rng := rand.New(rand.NewSource(8))
	ix := &signIndex{width: 24, nw: 3}
	q, qw := randomQuery(ix, rng)
	var want []int64 // the planted rows, nearest first
	randomRows(ix, rng, 4, func(id int64, row []uint64) {
		if id%500 == 3 {
			copy(row, qw)
			row[len(want)%3] ^= 1<<len(want) - 1 // len(want) bits flipped
			want = append(want, id)
		}
	})
	for _, p := range hammingPaths() {
		func() {
			defer p.use()()
			got := ix.hamming(q, 5, nil, nil, true)
			slices.SortFunc(got, func(a, b signDist) int { return cmp.Compare(a.d, b.d) })
			var ids []int64
			for _, g := range got {
				ids = append(ids, g.id)
			}
			if !slices.Equal(ids, want[:5]) {
				t.Fatalf("%s: kept %v, want %v", p.name, ids, want[:5])
			}
		}()
	}
}

func testHeadFirst(t *testing.T) {
	const perChunk, chunks = 1024, 40
	rng := rand.New(rand.NewSource(3))
	ix := &signIndex{width: 64, nw: 8}
	q, qw := randomQuery(ix, rng)
	// planted: 40 rows that differ from q in 10 to 88 bits, as rows at
	// cosine 0.95 down to 0.6 of it would; the rest differ in about 256
	planted := map[int64]int{}
	admit := make([]uint64, (chunks*perChunk)/64+1)
	randomRows(ix, rng, chunks, func(id int64, row []uint64) {
		admit[id/64] |= 1 << (id % 64)
		if id%1000 == 7 {
			copy(row, qw)
			flips := 10 + 2*len(planted)
			for _, b := range rng.Perm(512)[:flips] {
				row[b/64] ^= 1 << (b % 64)
			}
			planted[id] = flips
		}
	})
	ix.heads()
	ix.chunks[5].valid[0] &^= 1 // row 5121 (none planted) holds no vector
	gone, barred := int64(7007), int64(9007)
	ix.chunks[(gone-1)/perChunk].valid[(gone-1)%perChunk/8] &^= 1 << ((gone - 1) % perChunk % 8)
	admit[barred/64] &^= 1 << (barred % 64)
	// the first stage's distances: each row's first two words' alone
	starts := make([]int, chunks+1)
	for ci := range chunks {
		starts[ci+1] = starts[ci] + perChunk
	}
	dist, count := make([]uint16, chunks*perChunk), make([]int, 513)
	ix.headDistances(dist, starts, 0, chunks, qw, admit, count)
	counted := make([]int, 513)
	for ci := range ix.chunks {
		ch := &ix.chunks[ci]
		for i := range perChunk {
			want := skip
			if ch.holds(i) && has(admit, ch.rowid(i)) {
				w := ch.words[8*i:]
				want = bits.OnesCount64(w[0]^qw[0]) + bits.OnesCount64(w[1]^qw[1])
				counted[want]++
			}
			if got := int(dist[starts[ci]+i]); got != want {
				t.Fatalf("row %d: first words at distance %d, want %d", ch.rowid(i), got, want)
			}
		}
	}
	if !slices.Equal(count, counted) {
		t.Fatalf("rows counted at each distance of the first words: %v, want %v", count[:129], counted[:129])
	}
	type near struct {
		id int64
		d  int
	}
	for _, a := range []struct {
		name  string
		admit []uint64
	}{{"every row", nil}, {"a filter", admit}} {
		var want []near // the rows a whole scan finds nearest
		for id, d := range planted {
			if id != gone && (id != barred || a.admit == nil) {
				want = append(want, near{id, d})
			}
		}
		slices.SortFunc(want, func(a, b near) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.id, b.id)) })
		for _, k := range []int{1, 5, 20, len(want), 300} {
			got := ix.hamming(q, k, a.admit, spreadScan, true)
			if len(got) != k {
				t.Fatalf("%s, k=%d: %d rows kept", a.name, k, len(got))
			}
			byID := map[int64]int{}
			for _, g := range got {
				if d := ix.chunks[g.chunk].distance(g.slot, qw); g.d != d || ix.chunks[g.chunk].rowid(g.slot) != g.id {
					t.Fatalf("%s, k=%d: row %d kept at distance %d, its bits lie at %d (slot of row %d)", a.name, k, g.id, g.d, d, ix.chunks[g.chunk].rowid(g.slot))
				}
				byID[g.id] = g.d
			}
			if _, ok := byID[gone]; ok {
				t.Fatalf("%s, k=%d: row %d kept, it holds no vector", a.name, k, gone)
			}
			if _, ok := byID[barred]; ok && a.admit != nil {
				t.Fatalf("%s, k=%d: row %d kept, the filter does not admit it", a.name, k, barred)
			}
			for _, w := range want[:min(k, len(want))] {
				if d, ok := byID[w.id]; !ok || d != w.d {
					t.Fatalf("%s, k=%d: row %d at distance %d not kept (%v)", a.name, k, w.id, w.d, ok)
				}
			}
		}
	}
}

// BenchmarkHammingMillion times the sign-bit stage of a search over a
// million rows of the default model's 512 bits, every row admitted, on
// every core as a Nearest runs it: go test -bench HammingMillion ./cache.
// It runs the Go loop, and hamming.c where the CPU has POPCNT or AVX-512;
// "alike" is a near-duplicate check's, first words first (signhead.go).
// "cold" reads a gigabyte of other memory before each scan (untimed), as
// a process that answers one prompt among other work finds its sign bits
// gone from the CPU's caches: -benchtime 20x.
func BenchmarkHammingMillion(b *testing.B) {
	for _, p := range hammingPaths() {
		b.Run(p.name, func(b *testing.B) {
			defer p.use()()
			benchHammingMillion(b, rerankPool*200, false, false)
		})
		b.Run(p.name+"-cold", func(b *testing.B) {
			defer p.use()()
			benchHammingMillion(b, rerankPool*200, false, true)
		})
		b.Run(p.name+"-alike", func(b *testing.B) {
			defer p.use()()
			benchHammingMillion(b, rerankPool*alikePool*5, true, false)
		})
	}
}

func benchHammingMillion(b *testing.B, k int, alike, cold bool) {
	rng := rand.New(rand.NewSource(9))
	ix := &signIndex{width: 64, nw: 8}
	randomRows(ix, rng, 1_000_000/1024, nil)
	ix.heads() // filled once, by the first near-duplicate check
	q := make([]byte, 64)
	rng.Read(q)
	var other []byte
	if cold {
		other = make([]byte, 1<<30)
	}
	b.ResetTimer()
	for range b.N {
		if cold {
			b.StopTimer()
			for i := 0; i < len(other); i += 64 {
				other[i]++
			}
			b.StartTimer()
		}
		if got := ix.hamming(q, k, nil, spreadScan, alike); len(got) != k {
			b.Fatalf("%d rows kept, want %d", len(got), k)
		}
	}
}

// randomRows appends to ix chunks of 1,024 rows of random words (ix.nw a
// row), each with a vector, their rowids rising from 1; each, if not
// nil, sees every row just after its words are drawn (to plant some near
// a query, or note it in a set).
func randomRows(ix *signIndex, rng *rand.Rand, chunks int, each func(id int64, row []uint64)) {
	const perChunk = 1024
	for ci := range chunks {
		ch := signChunk{id: int64(ci), valid: make([]byte, perChunk/8), rowids: make([]byte, 8*perChunk), words: make([]uint64, ix.nw*perChunk)}
		for i := range perChunk {
			id := int64(ci*perChunk + i + 1)
			binary.LittleEndian.PutUint64(ch.rowids[8*i:], uint64(id))
			ch.valid[i/8] |= 1 << (i % 8)
			row := ch.words[ix.nw*i : ix.nw*(i+1)]
			for j := range row {
				row[j] = rng.Uint64()
			}
			if each != nil {
				each(id, row)
			}
		}
		ix.chunks = append(ix.chunks, ch)
	}
}

// randomQuery draws a query's sign bits for ix, and returns them with
// their words.
func randomQuery(ix *signIndex, rng *rand.Rand) ([]byte, []uint64) {
	q := make([]byte, ix.width)
	rng.Read(q)
	qw := make([]uint64, ix.nw)
	ix.pack(qw, q)
	return q, qw
}

// A search reads the sign bits from a snapshot, not as a write: while
// another process holds the write lock, a cache that waits for no lock
// still loads them (it took the write lock itself, and failed with
// "database is locked").
func TestLoadSignsTakesNoWriteLock(t *testing.T) {
	ctx := context.Background()
	c, p := newCache(t)
	var entries []memory.Entry
	for i := range 50 {
		entries = append(entries, mk(memory.TypeInsight, fmt.Sprintf("entry %d", i), time.Duration(i)*time.Minute))
	}
	put(t, c, entries)
	rng := rand.New(rand.NewSource(3))
	embedRandom(t, "m@1", func() []float32 { return randomVector(rng) }, c)
	writer, _, err := Open(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	tx, err := writer.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	reader, _, err := Open(p, 0) // no wait for a lock
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if ok, err := reader.UseStoredModel(ctx); err != nil || !ok {
		t.Fatalf("stored model: %v %v", ok, err)
	}
	if err := reader.LoadIndex(ctx); err != nil {
		t.Fatalf("load the sign bits beside a writer: %v", err)
	}
	if reader.signs == nil || reader.signs.rows() == 0 {
		t.Fatal("no sign bits read")
	}
	// and the connection went back to the pool out of its transaction:
	// a write after it takes the lock once the writer is done
	tx.Rollback()
	if err := reader.Update(ctx, func(*Tx) error { return nil }); err != nil {
		t.Fatalf("a write after the snapshot: %v", err)
	}
}

package cache

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// signScan is one Hamming scan of a sign index (hamming), in parts that
// any goroutine may take: the one that started it, and those that join
// it. A million rows take 17 ms on one core. A search's vector lanes rank
// in a goroutine of their own beside its BM25 lanes' SQL, and the search
// waits for them once that is done: the waiting goroutine joins the scan
// rather than idle (rankAside), and a Nearest alone joins one goroutine a
// core (spreadScan). Each worker counts its rows at each distance; the
// distances land in dist, each part's by the worker that took it, so the
// scan's answer does not depend on who did which part.
type signScan struct {
	ix     *signIndex
	qw     []uint64
	admit  []uint64
	dist   []uint16
	starts []int
	head   bool         // a first stage: the rows' first words alone (headDistances)
	next   atomic.Int64 // the first chunk of the next part

	count []int // the starter's rows at each distance

	mu     sync.Mutex
	closed bool    // the starter combined the counts: no one may join
	counts [][]int // each joiner's
	wg     sync.WaitGroup
}

// scanPart is how many chunks of the index (1,024 rows each) a worker
// takes at a time.
const scanPart = 16

// work scans parts until none is left, counting into count.
func (s *signScan) work(count []int) {
	n := int64(len(s.ix.chunks))
	for {
		lo := s.next.Add(scanPart) - scanPart
		if lo >= n {
			return
		}
		if s.head {
			s.ix.headDistances(s.dist, s.starts, int(lo), int(min(lo+scanPart, n)), s.qw, s.admit, count)
			continue
		}
		s.ix.distances(s.dist, s.starts, int(lo), int(min(lo+scanPart, n)), s.qw, s.admit, count)
	}
}

// join scans parts beside the starter until none is left; it returns at
// once when the scan is over.
func (s *signScan) join() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	count := make([]int, len(s.count))
	s.counts = append(s.counts, count)
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	s.work(count)
}

// run is the starter's part: parts until none is left, then, once those
// who joined are done, the rows at each distance over all of them.
func (s *signScan) run() []int {
	s.work(s.count)
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.wg.Wait()
	for _, c := range s.counts {
		for d, n := range c {
			s.count[d] += n
		}
	}
	return s.count
}

// spreadScan is an offer for a scan that nothing runs beside: a goroutine
// joins it on every core but the starter's (four in all at most).
func spreadScan(s *signScan) {
	for range min(runtime.GOMAXPROCS(0), 4) - 1 {
		go s.join()
	}
}

package gitstore

import (
	"bytes"
	"testing"
)

// FuzzParseLog feeds arbitrary bytes to the git log parser: it must never
// panic, whatever paths or messages a history holds.
func FuzzParseLog(f *testing.F) {
	f.Add([]byte("\x1eabc\x1f\x1fA <a@b>\x1f1700000000\x1fmsg\x1f\x00\n1\t2\tpath\x00-\t-\tbin\x00"))
	f.Add([]byte("\x1e\x1f\x1f\x1f\x1f\x1f\x00\n0\t0\t\x00old\x00new\x00"))
	f.Add([]byte("\x1e\x1e\x1f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parseLog(bytes.NewReader(data), func(Commit) error { return nil })
	})
}

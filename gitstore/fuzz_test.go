package gitstore

import (
	"bytes"
	"testing"
)

// FuzzParseLog feeds arbitrary bytes to the git log parser: it must never
// panic, whatever paths or messages a history holds.
func FuzzParseLog(f *testing.F) {
	f.Add([]byte("\x1eabc\x1f\x1fA <a@b>\x1f1700000000\x1fmsg\x1f\x00\n:100644 100644 aa bb M\x00path\x00:000000 100644 00 cc A\x00new\x00"))
	f.Add([]byte("\x1e\x1f\x1f\x1f\x1f\x1f\x00\n:100644 100644 aa aa R100\x00old\x00new\x00"))
	f.Add([]byte("\x1e\x1f\x1f\x1f\x1f\x1f\x00\n:100644 000000 aa 00 D\x00old\x00:000000 100644 00 aa A\x00new\x00"))
	f.Add([]byte("\x1e\x1e\x1f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parseLog(bytes.NewReader(data), func(_ Commit, changes []rawChange) error {
			fileChanges(pairExactRenames(changes))
			return nil
		})
	})
}

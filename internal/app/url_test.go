package app

import "testing"

func TestCanonicalURLSpellsEquivalentURLsAlike(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"https://GitHub.com/org/memory.git", "https://github.com/org/memory/"},
		{"git@github.com:org/memory.git", "ssh://git@github.com/org/memory"},
		{"ssh://git@github.com:22/org/memory.git", "git@github.com:org/memory"},
		{"file:///p/org.git", "/p/org.git"},
		{"/p/repo/.git", "/p/repo"},
		{"../org.git", "/p/org.git"},
	} {
		if x, y := canonicalURL(c.a, "/p/here"), canonicalURL(c.b, "/p/here"); x != y {
			t.Errorf("%s → %s, %s → %s", c.a, x, c.b, y)
		}
	}
	for _, c := range []struct{ a, b string }{
		{"https://github.com/org/memory", "https://github.com/org/other"},
		{"https://github.com/org/memory", "https://gitlab.com/org/memory"},
		{"/p/org.git", "/p/org"},
	} {
		if canonicalURL(c.a, "/p/here") == canonicalURL(c.b, "/p/here") {
			t.Errorf("%s and %s taken for the same repository", c.a, c.b)
		}
	}
}

package app

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestStackNamesReadManifests(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/x\n\ngo 1.24\n\nrequire (\n\tgithub.com/spf13/cobra v1.9.1\n\tgithub.com/go-git/go-git/v5 v5.16.0\n\tgolang.org/x/sys v0.30.0 // indirect\n)\n\nrequire github.com/mattn/go-sqlite3 v1.14.24\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"dependencies": {"react": "^18", "@tanstack/query": "5"}, "devDependencies": {"vite": "5"}}`), 0o644)
	got := stackNames(dir)
	want := []string{"Go", "JavaScript", "cobra", "go-git", "go-sqlite3", "query", "react", "vite"}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("stackNames lacks %q: %v", w, got)
		}
	}
	if slices.Contains(got, "sys") || slices.Contains(got, "v5") {
		t.Errorf("stackNames keeps short or version names: %v", got)
	}
	if got := stackNames(t.TempDir()); len(got) != 0 {
		t.Errorf("an empty tree has names: %v", got)
	}
}

func TestMentionsMatchesWholeWords(t *testing.T) {
	names := []string{"Go", "cobra"}
	for text, want := range map[string]bool{
		"In Go, wrap errors with %w":         true,
		"let's go ahead and ship":            false, // the verb, not the language
		"Cobra commands need examples":       true,  // dependencies ignore case
		"the cobras-and-snakes fixture":      false,
		"Gopher mascots":                     false,
		"use cobra.Command for every verb":   true,
		"a project without any of the names": false,
	} {
		if got := mentions(text, names); got != want {
			t.Errorf("mentions(%q) = %v, want %v", text, got, want)
		}
	}
}

// Package hooks installs git-synaptic's git hooks: short versioned shell
// scripts that call `git-synaptic hook <name>`, chain the hook that was
// there before (kept as <name>.pre-synaptic), never fail or block git, and
// can be removed again, restoring what was there.
//
// post-commit and post-merge hand the new HEAD to the warm process
// (git synaptic daemon) and return at once: the program runs detached from
// git, as git gc --auto does, so git waits only for the shell. Where no
// daemon runs, the next command indexes the new commits instead (the
// lazy catch-up, app.Service.Index).
package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Version is the version of the scripts this build installs.
const Version = 4

// Names are the git hooks git-synaptic uses.
var Names = []string{"post-rewrite", "pre-push", "post-commit", "post-merge"}

// Retired are hooks earlier versions installed: install and uninstall
// remove them, restoring the hooks they chained.
var Retired = []string{"post-checkout"}

const marker = "# git-synaptic hook"

// prevSuffix names the user's own hook once ours takes its place.
const prevSuffix = ".pre-synaptic"

// Script is the hook script for name.
func Script(name string) string {
	// post-rewrite gets the list of rewritten commits on stdin; both our
	// command and the previous hook need it, so it is read once. pre-push
	// gets the refs being pushed, which only the previous hook needs.
	stdin, feedPrev := "", ""
	ours := "git-synaptic hook " + name + ` "$@" </dev/null >/dev/null 2>&1 || true`
	when := ""
	what := "keeps git-synaptic's index of this repository current"
	switch name {
	case "post-commit", "post-merge":
		// detached: git does not wait for the program to start
		ours = "(git-synaptic hook " + name + ` "$@" </dev/null >/dev/null 2>&1 &)`
		what = "hands the new commits to git-synaptic's warm process, detached"
	case "post-rewrite":
		stdin = "input=$(cat)\n"
		feedPrev = `printf '%s\n' "$input" | `
		ours = `printf '%s\n' "$input" | git-synaptic hook post-rewrite "$@" >/dev/null 2>&1 || true`
	case "pre-push":
		// Memory goes with its own git push, only when the user's push is
		// going ahead; a failure is told on stderr and changes nothing. It
		// never asks for a password: one the user's push did not need
		// cannot be right for it either, and a prompt would hold git up.
		stdin = "input=$(cat)\n"
		feedPrev = `printf '%s\n' "$input" | `
		ours = `GIT_TERMINAL_PROMPT=0 git-synaptic hook pre-push "$@" </dev/null >/dev/null || true`
		when = `[ "$status" = 0 ] && `
		what = "pushes memory along with git push"
	}
	return fmt.Sprintf(`#!/bin/sh
%s v%d (%s): %s.
# Installed by 'git synaptic hooks install'; 'git synaptic hooks uninstall'
# removes it and restores the hook that was here before (%s%s).
# It never fails and never blocks git: the exit status is the previous hook's.
%sstatus=0
if [ -x "$0%s" ]; then
	%s"$0%s" "$@"
	status=$?
fi
if %scommand -v git-synaptic >/dev/null 2>&1; then
	%s
fi
exit $status
`, marker, Version, name, what, name, prevSuffix, stdin, prevSuffix, feedPrev, prevSuffix, when, ours)
}

// Report says what Install or Uninstall did, hook by hook.
type Report struct {
	Dir     string            `json:"dir"`
	Actions map[string]string `json:"actions"`
}

// Ours reports whether the file at path is a git-synaptic hook, and its version.
func Ours(path string) (bool, int) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, 0
	}
	i := bytes.Index(b, []byte(marker+" v"))
	if i < 0 {
		return false, 0
	}
	var v int
	fmt.Sscanf(string(b[i+len(marker)+2:]), "%d", &v)
	return true, v
}

// Install writes the hooks into dir. A user's hook already there is kept as
// <name>.pre-synaptic and run first by ours; an older version of ours is
// upgraded; running it again changes nothing.
func Install(dir string) (Report, error) {
	rep := Report{Dir: dir, Actions: map[string]string{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return rep, fmt.Errorf("hooks dir: %w", err)
	}
	for _, name := range Names {
		path := filepath.Join(dir, name)
		script := Script(name)
		cur, err := os.ReadFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			rep.Actions[name] = "installed"
		case err != nil:
			return rep, fmt.Errorf("read %s: %w", path, err)
		case string(cur) == script:
			rep.Actions[name] = "up to date"
			continue
		case bytes.Contains(cur, []byte(marker)):
			rep.Actions[name] = "upgraded"
		default:
			prev := path + prevSuffix
			if _, err := os.Stat(prev); err == nil {
				return rep, fmt.Errorf("cannot install %s: both %s and %s exist and neither is git-synaptic's; merge them by hand", name, path, prev)
			}
			if err := os.Rename(path, prev); err != nil {
				return rep, fmt.Errorf("keep existing %s: %w", name, err)
			}
			rep.Actions[name] = "installed, chaining the existing hook (" + name + prevSuffix + ")"
		}
		if err := writeExecutable(path, script); err != nil {
			return rep, err
		}
	}
	return rep, removeOurs(dir, Retired, rep)
}

// Uninstall removes our hooks from dir, retired ones included, and
// restores the hooks they chained. Hooks that are not ours are left alone.
func Uninstall(dir string) (Report, error) {
	rep := Report{Dir: dir, Actions: map[string]string{}}
	for _, name := range Names {
		path := filepath.Join(dir, name)
		if ok, _ := Ours(path); ok {
			continue
		}
		if _, err := os.Stat(path); err == nil {
			rep.Actions[name] = "not ours, left alone"
		} else {
			rep.Actions[name] = "not installed"
		}
	}
	return rep, removeOurs(dir, append(append([]string(nil), Names...), Retired...), rep)
}

// removeOurs removes those of names in dir that are ours, restoring the
// hooks they chained, and records it in rep.
func removeOurs(dir string, names []string, rep Report) error {
	for _, name := range names {
		path := filepath.Join(dir, name)
		if ok, _ := Ours(path); !ok {
			continue
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("remove %s: %w", path, err)
		}
		rep.Actions[name] = "removed"
		if _, err := os.Stat(path + prevSuffix); err == nil {
			if err := os.Rename(path+prevSuffix, path); err != nil {
				return fmt.Errorf("restore %s: %w", name, err)
			}
			rep.Actions[name] = "removed, previous hook restored"
		}
	}
	return nil
}

// Status describes each hook in dir.
func Status(dir string) map[string]string {
	out := map[string]string{}
	for _, name := range Names {
		path := filepath.Join(dir, name)
		ok, v := Ours(path)
		switch {
		case ok && v == Version:
			out[name] = "installed"
		case ok:
			out[name] = fmt.Sprintf("installed v%d (run git synaptic hooks install to upgrade to v%d)", v, Version)
		default:
			if _, err := os.Stat(path); err == nil {
				out[name] = "a hook that is not git-synaptic's"
			} else {
				out[name] = "not installed"
			}
		}
		if _, err := os.Stat(path + prevSuffix); err == nil && ok {
			out[name] += ", chaining " + name + prevSuffix
		}
	}
	return out
}

func writeExecutable(path, content string) error {
	tmp := path + ".tmp-synaptic"
	if err := os.WriteFile(tmp, []byte(content), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

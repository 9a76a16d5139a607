//go:build !unix

package main

import "os"

// pollable is the unix one's stand-in: the reader of stdin keeps its
// thread here.
func pollable(int, string) (*os.File, func()) { return nil, nil }

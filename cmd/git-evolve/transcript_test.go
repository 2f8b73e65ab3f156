package main

import (
	"testing"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/share"
)

// The transcripts run keeps are the ones sync carries.
func TestTranscriptRefsAgree(t *testing.T) {
	if cycle.TranscriptsPrefix != share.TranscriptsPrefix {
		t.Fatalf("cycle keeps transcripts under %s, share carries %s", cycle.TranscriptsPrefix, share.TranscriptsPrefix)
	}
}

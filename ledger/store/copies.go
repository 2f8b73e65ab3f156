package store

import (
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/git-evolve/git-evolve/gitstore"
)

// A read takes a remote-tracking copy of the ledger beside the local one
// only when the copy passes the check a sync makes before it merges it
// (CheckCopies): a copy sync refused, which a plain git fetch brings too,
// would otherwise show a forged record in place of this clone's own and
// make every verify of a clean ledger fail. A copy refused is read past,
// and named in Refused.

// CopyCheck judges a remote-tracking copy of the ledger before a read takes
// it: local is the local ledger's tip (zero when there is none), copy is
// the copy's. It returns nil when the copy may be read, else why not.
type CopyCheck func(local, copy gitstore.Hash) (*CopyRefusal, error)

// CopyRefusal says why a remote-tracking copy of the ledger is not read.
type CopyRefusal struct {
	// Ref is the copy's ref (refs/notes/remotes/<remote>/evolve) and Tip
	// what it holds.
	Ref string
	Tip gitstore.Hash
	// NotesCommit is the notes commit that brought the (first) breach,
	// and By who made it and when; zero and "" when it is not known.
	NotesCommit gitstore.Hash
	By          string
	// Breaches is how many breaches the copy would bring; Reason is the
	// first, in verify's words (untrusted text: escape it to print it).
	Breaches int
	Reason   string
	// Unread says the copy could not be read whole: objects of it are
	// ones a partial clone's filter left out (gitstore.ErrPromised), when
	// a plain git fetch brought it. Breaches is then 0.
	Unread bool
}

// Remote is the remote the refused copy was fetched from.
func (r *CopyRefusal) Remote() string {
	rest := strings.TrimPrefix(r.Ref, "refs/notes/remotes/")
	return strings.TrimSuffix(rest, "/evolve")
}

// copyReads is what the reads of one process found of the copies: each
// check's answer (a ledger is read several times a command), and the
// copies refused.
type copyReads struct {
	mu      sync.Mutex
	answers map[[2]gitstore.Hash]*CopyRefusal
	refused map[string]CopyRefusal
}

// CheckCopies makes every read of the ledger (List, Entries, Sources, the
// cycle numbers) take a remote-tracking copy only when check lets it. It
// returns l.
func (l *Ledger) CheckCopies(check CopyCheck) *Ledger {
	l.check = check
	return l
}

// Refused lists the remote-tracking copies the reads so far have left out,
// by ref.
func (l *Ledger) Refused() []CopyRefusal {
	c := l.copies
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]CopyRefusal, 0, len(c.refused))
	for _, r := range c.refused {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b CopyRefusal) int { return strings.Compare(a.Ref, b.Ref) })
	return out
}

// admits says whether the copy at ref (tip) may be read beside the local
// ledger (local): always without a check; a copy the check cannot judge
// is not read, and refused as such.
func (l *Ledger) admits(ref string, local, tip gitstore.Hash) bool {
	if l.check == nil {
		return true
	}
	c := l.copies
	key := [2]gitstore.Hash{local, tip}
	c.mu.Lock()
	r, asked := c.answers[key]
	c.mu.Unlock()
	if !asked {
		var err error
		r, err = l.check(local, tip)
		switch {
		case errors.Is(err, gitstore.ErrPromised):
			r = &CopyRefusal{Unread: true, Reason: "its notes were fetched through this partial clone's filter, without their contents"}
		case err != nil:
			r = &CopyRefusal{Breaches: 1, Reason: "it could not be checked: " + err.Error()}
		}
		c.mu.Lock()
		c.answers[key] = r
		c.mu.Unlock()
	}
	if r == nil {
		return true
	}
	got := *r
	got.Ref, got.Tip = ref, tip
	c.mu.Lock()
	c.refused[ref] = got
	c.mu.Unlock()
	return false
}

package store

import (
	"errors"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
)

// A remote-tracking copy is read only when the check lets it: a copy
// refused is left out of every read (the listing, the sources, the next
// cycle number) and named by Refused; the check is asked once a process
// for a pair of tips, never for a copy the local ledger holds whole, and a
// check that fails refuses the copy.
func TestCheckCopies(t *testing.T) {
	testenv.Slow(t)
	dir, commits := testRepo(t, 5)
	l := openLedger(t, dir)
	record(t, l, commits[0], 0)
	record(t, l, commits[1], 0)
	local := tipOf(t, l, NotesRef)
	// the copy: one record more, on commits[2] (cycle 3)
	record(t, l, commits[2], 0)
	git(t, dir, "update-ref", copyRef, NotesRef)
	git(t, dir, "update-ref", NotesRef, local.String())
	copy := tipOf(t, l, copyRef)

	type ask struct{ local, copy gitstore.Hash }
	var asked []ask
	checker := func(refuse *CopyRefusal, err error) CopyCheck {
		return func(local, copy gitstore.Hash) (*CopyRefusal, error) {
			asked = append(asked, ask{local, copy})
			return refuse, err
		}
	}

	if got := export(t, openLedger(t, dir)); !strings.Contains(got, commits[2]) {
		t.Fatalf("without a check the copy is not read: %q", got)
	}

	refused := openLedger(t, dir).CheckCopies(checker(&CopyRefusal{Breaches: 2, Reason: "forged"}, nil))
	got := export(t, refused)
	if strings.Contains(got, commits[2]) || !strings.Contains(got, commits[1]) {
		t.Errorf("a refused copy is read: %q", got)
	}
	sources, err := refused.Sources()
	if err != nil || len(sources) != 1 || sources[0] != local {
		t.Errorf("Sources = %v, %v; want the local ledger alone", sources, err)
	}
	if _, err := refused.List(ListOptions{Journal: true}); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != (ask{local, copy}) {
		t.Errorf("the check was asked %v, want once, of the local tip and the copy's", asked)
	}
	want := CopyRefusal{Ref: copyRef, Tip: copy, Breaches: 2, Reason: "forged"}
	if r := refused.Refused(); len(r) != 1 || r[0] != want || r[0].Remote() != "origin" {
		t.Errorf("Refused = %+v, want %+v from origin", r, want)
	}
	// the next number is the local ledger's next, not past the copy's
	rec, err := recordWith(refused, recordOn(commits[3], 0))
	if err != nil {
		t.Fatal(err)
	}
	if n := rec.Entry.Record.Cycle; n != 3 {
		t.Errorf("the next cycle beside a refused copy: %d, want 3", n)
	}
	git(t, dir, "update-ref", NotesRef, local.String())

	asked = nil
	admitted := openLedger(t, dir).CheckCopies(checker(nil, nil))
	if got := export(t, admitted); !strings.Contains(got, commits[2]) {
		t.Errorf("an admitted copy is not read: %q", got)
	}
	if len(admitted.Refused()) != 0 || len(asked) != 1 {
		t.Errorf("admitted: refused %v, asked %v", admitted.Refused(), asked)
	}
	if rec, err = recordWith(admitted, recordOn(commits[3], 0)); err != nil {
		t.Fatal(err)
	}
	if n := rec.Entry.Record.Cycle; n != 4 {
		t.Errorf("the next cycle beside an admitted copy: %d, want 4", n)
	}

	// a copy the local ledger holds whole is not asked about
	asked = nil
	git(t, dir, "update-ref", copyRef, local.String())
	if export(t, openLedger(t, dir).CheckCopies(checker(&CopyRefusal{}, nil))); len(asked) != 0 {
		t.Errorf("a merged copy was checked: %v", asked)
	}

	// a check that fails refuses the copy, saying why
	git(t, dir, "update-ref", copyRef, copy.String())
	failing := openLedger(t, dir).CheckCopies(checker(nil, errors.New("no such object")))
	if got := export(t, failing); strings.Contains(got, commits[2]) {
		t.Errorf("a copy that could not be checked is read: %q", got)
	}
	if r := failing.Refused(); len(r) != 1 || !strings.Contains(r[0].Reason, "could not be checked: no such object") {
		t.Errorf("Refused = %+v", r)
	}
}

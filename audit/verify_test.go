package audit

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

func commit(b byte) gitstore.Hash {
	var h gitstore.Hash
	for i := range h {
		h[i] = b
	}
	return h
}

func rec(id string, n int, prev *ledger.Record) ledger.Record {
	two := 2
	r := ledger.Record{V: 1, ID: id, Cycle: n, Target: "t", Result: ledger.Improved, GoalsPassing: &two, GoalsTotal: &two,
		Extra: map[string]json.RawMessage{"recorded_by": json.RawMessage(`"Ann <a@x>"`), "host": json.RawMessage(`"box"`)}}
	if prev != nil {
		r.Extra["prev"] = ledger.Value(ledger.Link(prev))
	}
	return r
}

func index(entries ...store.Entry) *sumIndex { return sums(entries...).byKey() }

// sums are the summaries of entries, in their order.
func sums(entries ...store.Entry) *ledgerSums {
	ls := &ledgerSums{}
	for _, e := range entries {
		ls.Sums = append(ls.Sums, sumOf(&e.Record, e.Commit))
	}
	ls.sort()
	return ls
}

func kinds(rep *Report) string {
	var ks []string
	for _, f := range rep.Findings {
		ks = append(ks, string(f.Severity)+":"+f.Kind)
	}
	return strings.Join(ks, " ")
}

// chainOf runs the chain check on the records of x, as verify does.
func chainOf(rep *Report, x *sumIndex) {
	rep.Findings = append(rep.Findings, beforeChain(checkChain(rep, x, x, nil))...)
}

func TestChain(t *testing.T) {
	a := rec("a", 1, nil)
	b := rec("b", 2, &a)
	c := rec("c", 3, &b)
	ok := index(store.Entry{Record: a, Commit: commit(1)}, store.Entry{Record: b, Commit: commit(2)}, store.Entry{Record: c, Commit: commit(3)})
	rep := &Report{}
	chainOf(rep, ok)
	if len(rep.Findings) != 0 {
		t.Errorf("a whole chain: %s", kinds(rep))
	}

	// b edited after c was written: c's prev names b with another digest.
	edited := b
	edited.Target = "changed"
	rep = &Report{}
	chainOf(rep, index(store.Entry{Record: a, Commit: commit(1)}, store.Entry{Record: edited, Commit: commit(2)}, store.Entry{Record: c, Commit: commit(3)}))
	if got := kinds(rep); got != "breach:edited" {
		t.Errorf("an edited record: %s, want breach:edited", got)
	} else if f := rep.Findings[0]; f.ID != "b" || f.Cycle != 2 {
		t.Errorf("the finding names %s cycle %d, want b cycle 2", f.ID, f.Cycle)
	}

	// b deleted: c names a record the ledger no longer has.
	rep = &Report{}
	chainOf(rep, index(store.Entry{Record: a, Commit: commit(1)}, store.Entry{Record: c, Commit: commit(3)}))
	if got := kinds(rep); got != "breach:deleted" {
		t.Errorf("a deleted record: %s, want breach:deleted", got)
	}

	// b also as an import anchored it, on a commit that sorts before b's
	// own: c names b as it was made, which the ledger still has. (Whether
	// the two copies are one record is the duplicate-id finding's to say.)
	anchored := b
	anchored.Extra = maps.Clone(b.Extra)
	anchored.Extra["anchored"] = json.RawMessage("true")
	rep = &Report{}
	chainOf(rep, index(store.Entry{Record: a, Commit: commit(1)}, store.Entry{Record: anchored, Commit: commit(0)},
		store.Entry{Record: b, Commit: commit(2)}, store.Entry{Record: c, Commit: commit(3)}))
	if len(rep.Findings) != 0 {
		t.Errorf("a record linked to as made, its anchored copy first: %s", kinds(rep))
	}

	// Two clones wrote after a at once: a fork, not a breach; records from
	// before the chain are a notice.
	old := ledger.Record{V: 1, ID: "old", Cycle: 1, Target: "t", Result: ledger.Improved}
	b2 := rec("b2", 2, &a)
	rep = &Report{}
	chainOf(rep, index(store.Entry{Record: old, Commit: commit(9)}, store.Entry{Record: a, Commit: commit(1)},
		store.Entry{Record: b, Commit: commit(2)}, store.Entry{Record: b2, Commit: commit(4)}))
	if got := kinds(rep); got != "notice:before-chain" {
		t.Errorf("a fork and an old record: %s, want notice:before-chain", got)
	}
}

func TestIDsAndNumbers(t *testing.T) {
	a := rec("a", 1, nil)
	other := rec("a", 1, nil)
	other.Target = "other"
	b := rec("b", 1, &a)
	rep := &Report{}
	ls := sums(store.Entry{Record: a, Commit: commit(1)}, store.Entry{Record: a, Commit: commit(5)}, store.Entry{Record: b, Commit: commit(2)})
	byID := ls.byKey()
	checkIDs(rep, byID)
	if len(rep.Findings) != 0 {
		t.Errorf("a record copied to two commits: %s", kinds(rep))
	}
	checkNumbers(rep, ls.Sums, byID)
	if got := kinds(rep); got != "notice:number-collision" {
		t.Errorf("two records of cycle 1: %s, want notice:number-collision", got)
	} else if m := rep.Findings[0].Message; !strings.Contains(m, "Ann on box") {
		t.Errorf("the collision says who and where: %q", m)
	}
	rep = &Report{}
	checkIDs(rep, index(store.Entry{Record: a, Commit: commit(1)}, store.Entry{Record: other, Commit: commit(5)}))
	if got := kinds(rep); got != "breach:duplicate-id" {
		t.Errorf("one id, two records: %s, want breach:duplicate-id", got)
	}
}

// TestNumbersInOrder: collisions are reported cycle by cycle, each record
// once however many commits it is copied to, and a cycle one record took
// is none.
func TestNumbersInOrder(t *testing.T) {
	var entries []store.Entry
	for _, r := range []struct {
		id string
		n  int
		on []byte
	}{{"x", 7, []byte{1}}, {"y", 7, []byte{2, 3}}, {"z", 3, []byte{4}}, {"w", 3, []byte{5}}, {"v", 3, []byte{6}}, {"u", 5, []byte{7, 8}}} {
		for _, c := range r.on {
			entries = append(entries, store.Entry{Record: rec(r.id, r.n, nil), Commit: commit(c)})
		}
	}
	ls := sums(entries...)
	rep := &Report{}
	checkNumbers(rep, ls.Sums, ls.byKey())
	var got []string
	for _, f := range rep.Findings {
		got = append(got, fmt.Sprintf("%d: %s", f.Cycle, f.Message[:strings.Index(f.Message, ";")]))
	}
	want := []string{
		"3: cycle 3 was taken by 3 records: v (Ann on box), w (Ann on box), z (Ann on box)",
		"7: cycle 7 was taken by 2 records: x (Ann on box), y (Ann on box)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("collisions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

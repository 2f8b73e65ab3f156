package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// openKeys reads a keys section written alone to path.
func openKeys(path string, token [16]byte) (*keysFile, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	k := &keptFile{Kept: store.KeptOf([store.Sections][]byte{secKeys: data})}
	defer k.release()
	return keysIn(k, token)
}

// keptSectionsOf reads the sections of the view's file at path.
func keptSectionsOf(t *testing.T, path string) [store.Sections][]byte {
	t.Helper()
	k := store.OpenKept(path)
	if k == nil {
		t.Fatalf("%s: the table is damaged", path)
	}
	defer k.Release()
	var out [store.Sections][]byte
	for i := range out {
		out[i] = bytes.Clone(k.Section(i))
	}
	return out
}

// writeKeptSections puts verify's sections of sections in the view's file
// at path, the others as they are.
func writeKeptSections(t *testing.T, path string, sections [store.Sections][]byte) {
	t.Helper()
	var parts [store.Sections]*store.Part
	for _, i := range verifySections {
		parts[i] = &store.Part{Bytes: sections[i]}
	}
	if err := store.PutKept(path, nil, parts); err != nil {
		t.Fatal(err)
	}
}

// putSection puts data in section i of the view's file at path (none: the
// section absent), the others as they are.
func putSection(t *testing.T, path string, i int, data []byte) {
	t.Helper()
	var parts [store.Sections]*store.Part
	parts[i] = &store.Part{Bytes: data}
	if err := store.PutKept(path, nil, parts); err != nil {
		t.Fatal(err)
	}
}

// A verify after a record appends the delta and the objects, and names the
// state and the keys as they were; a verify with nothing changed leaves
// the file as it is, not written again.
func TestKeptDeltaCopiesTheRest(t *testing.T) {
	a, rng := recordedClone(t, 8, 4)
	path := store.ViewPath(a.repo)
	for i := 0; i < 2; i++ {
		if _, err := VerifyWith(a.l, VerifyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before := keptSectionsOf(t, path)
	was, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	unchanged := func(when string) {
		t.Helper()
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := VerifyWith(a.l, VerifyOptions{}); err != nil {
			t.Fatal(err)
		}
		if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, before) {
			t.Errorf("%s: a verify with nothing changed wrote the view: %d bytes, then %d (%v)", when, len(before), len(now), err)
		}
	}
	unchanged("after a verify that read every summary")
	a.record(rng)
	if _, err := VerifyWith(a.l, VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if now, err := os.Stat(path); err != nil || !os.SameFile(was, now) || now.Size() <= was.Size() {
		t.Errorf("a verify after a record did not append to the view (%v)", err)
	}
	after := keptSectionsOf(t, path)
	for _, sec := range []int{secState, secKeys} {
		if !bytes.Equal(after[sec], before[sec]) {
			t.Errorf("section %d changed after a record: it was to be copied", sec)
		}
	}
	if bytes.Equal(after[secDelta], before[secDelta]) {
		t.Error("the delta is the same after a record")
	}
	if len(after[secObjects]) == 0 {
		t.Error("no objects section after a record")
	}
	unchanged("after a verify that appended")
}

// Every verify that reads the view's file through a mapping (store.MapEvery:
// the test's ledgers are too small to be mapped otherwise) lets the
// mapping go only once nothing reads it: a read after would fault. It
// builds on the delta and copies the state and the keys out of the
// mapping, saves in the background, reads the state whole, and reads a
// damaged state; each answers what a verify from git alone answers.
func TestKeptMapped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the mapping is seen in /proc/self/maps")
	}
	defer store.MapEvery()()
	a, rng := recordedClone(t, 12, 6)
	state := filepath.Join(a.repo.CommonDir(), "evolve")
	path := filepath.Join(state, "ledger.view")
	// fromGit is the answer from git alone, what verify keeps put back
	// after it
	fromGit := func(o VerifyOptions) string {
		t.Helper()
		saved := map[string][]byte{}
		for _, name := range []string{"verified", "ledger.view"} {
			if data, err := os.ReadFile(filepath.Join(state, name)); err == nil {
				saved[name] = data
			}
		}
		o.FromGit = true
		rep, err := VerifyWith(a.l, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"verified", "ledger.view"} {
			os.Remove(filepath.Join(state, name))
			if data, ok := saved[name]; ok {
				if err := os.WriteFile(filepath.Join(state, name), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
		return reportText(rep)
	}
	same := func(what string, o VerifyOptions) {
		t.Helper()
		want := fromGit(VerifyOptions{BreachesOnly: o.BreachesOnly})
		rep, err := VerifyWith(a.l, o)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		WaitSaved()
		if got := reportText(rep); got != want {
			t.Errorf("%s: the answer differs\ngot:      %s\nfrom git: %s", what, got, want)
		}
	}
	mapped := func() bool {
		maps, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Contains(maps, []byte(path))
	}
	same("the first", VerifyOptions{})
	same("nothing changed", VerifyOptions{})
	a.record(rng)
	same("a record since: the delta, the state and the keys copied", VerifyOptions{})
	a.record(rng)
	same("a record since, saved in the background", VerifyOptions{SaveLater: true, BreachesOnly: true})
	same("nothing changed since", VerifyOptions{})
	a.git("notes", "--ref=evolve", "remove", a.noted()[1])
	same("a note removed by git: the state read whole", VerifyOptions{})
	if !mapped() {
		t.Error("the view was never mapped: the test reads it as a copy")
	}
	a.record(rng)
	secs := keptSectionsOf(t, path)
	secs[secState] = bytes.Clone(secs[secState])
	secs[secState][len(secs[secState])/2] ^= 8
	secs[secDelta] = nil
	writeKeptSections(t, path, secs)
	same("a damaged state", VerifyOptions{})
}

// A state whose bytes still decode, one of them changed so that a
// record's summary says another thing (its number, its result, its prev
// link, whether it is chained or its commit here), is refused by the
// state's own check as verify reads it: the answer is git's.
func TestKeptStateChangedChangesNoVerdict(t *testing.T) {
	a, _ := recordedClone(t, 8, 4)
	for i := 0; i < 2; i++ {
		if _, err := VerifyWith(a.l, VerifyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	path := store.ViewPath(a.repo)
	secs := keptSectionsOf(t, path)
	decoded := func(state []byte) *verifyState {
		st, body, err := decodeHeader(state)
		if err != nil || len(body) < 4 {
			return nil
		}
		k := &keptFile{Kept: store.KeptOf(secs)}
		defer k.release()
		if decodeBody(st, body[:len(body)-4], func(tok [16]byte) (*keysFile, bool) { return keysIn(k, tok) }) != nil {
			return nil
		}
		return st
	}
	was := decoded(secs[secState])
	if was == nil {
		t.Fatal("the state written does not decode")
	}
	differs := func(st *verifyState) bool {
		if len(st.Sums.Sums) != len(was.Sums.Sums) {
			return true
		}
		for i, s := range st.Sums.Sums {
			w := was.Sums.Sums[i]
			if s.Cycle != w.Cycle || s.Result != w.Result || s.Prev != w.Prev || s.Chained != w.Chained || s.Absent != w.Absent || s.NotCommit != w.NotCommit {
				return true
			}
		}
		return false
	}
	full, err := VerifyWith(a.l, VerifyOptions{FromGit: true})
	if err != nil {
		t.Fatal(err)
	}
	want := reportText(full)
	changed := 0
	state := secs[secState]
	for i := len(verifyStateMagic); i < len(state)-4 && changed < 8; i++ {
		for bit := 0; bit < 8; bit++ {
			out := bytes.Clone(state)
			out[i] ^= 1 << bit
			if st := decoded(out); st == nil || !differs(st) {
				continue
			}
			changed++
			put := secs
			put[secState], put[secDelta] = out, nil // the state read whole
			writeKeptSections(t, path, put)
			verifyGives(t, a, want, fmt.Sprintf("byte %d of the state, bit %d", i, bit))
			break
		}
	}
	if changed == 0 {
		t.Fatal("no change to the state that still decodes")
	}
}

// emptyRepo is a repository of no commit, for the tests of the file alone.
func emptyRepo(t *testing.T) *gitstore.Repo {
	t.Helper()
	dir := t.TempDir()
	testenv.Git(t, dir, "init", "-q")
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return repo
}

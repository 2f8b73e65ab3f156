package audit

import (
	"bufio"
	"bytes"
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
	k := &keptFile{data: data, refs: 1}
	k.sec[secKeys] = data
	defer k.release()
	return keysIn(k, token)
}

// keptSections reads the sections of the verify-kept at path.
func keptSectionsOf(t *testing.T, path string) [keptSections][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k, ok := parseKept(data)
	if !ok {
		t.Fatalf("%s: the table is damaged", path)
	}
	return k.sec
}

// writeKeptSections writes a verify-kept of sections at path.
func writeKeptSections(t *testing.T, path string, sections [keptSections][]byte) {
	t.Helper()
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	head := append([]byte(keptMagic), keptFormat)
	w.Write(head)
	var table []byte
	at := len(head)
	for _, s := range sections {
		w.Write(s)
		table = appendLE64(appendLE64(table, uint64(at)), uint64(len(s)))
		at += len(s)
	}
	w.Write(table)
	w.Write(appendLE32(nil, keptSum(head, table)))
	w.Flush()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendLE64(b []byte, v uint64) []byte {
	for i := 0; i < 8; i++ {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

func appendLE32(b []byte, v uint32) []byte {
	for i := 0; i < 4; i++ {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// The container's table is read as written, and refused when any byte of
// it, of the magic line or of the format is changed, or the file is cut.
func TestKeptTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verify-kept")
	want := [keptSections][]byte{[]byte("state"), nil, []byte("the delta"), []byte("objects")}
	writeKeptSections(t, path, want)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k, ok := parseKept(data)
	if !ok {
		t.Fatal("the table written was refused")
	}
	for i := range want {
		if !bytes.Equal(k.sec[i], want[i]) {
			t.Errorf("section %d: %q, want %q", i, k.sec[i], want[i])
		}
	}
	head := len(keptMagic) + 1
	for i := 0; i < len(data); i++ {
		if i >= head && i < len(data)-keptTail {
			continue // a section's bytes: its own reader checks them
		}
		bad := bytes.Clone(data)
		bad[i] ^= 1
		if _, ok := parseKept(bad); ok {
			t.Errorf("byte %d changed: the table was taken", i)
		}
	}
	for n := 0; n < len(data); n++ {
		if _, ok := parseKept(data[:n]); ok {
			t.Errorf("cut to %d bytes: the table was taken", n)
		}
	}
}

// writeKept writes what the test's writer does: the two agree on the
// layout.
func TestWriteKeptAgrees(t *testing.T) {
	dir := t.TempDir()
	testenv.Git(t, dir, "init", "-q")
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	sections := [keptSections][]byte{[]byte("state"), bytes.Repeat([]byte("k"), 300<<10), nil, []byte("objects")}
	write := [keptSections]func(*bufio.Writer){}
	write[secKeys] = func(w *bufio.Writer) { w.Write(sections[secKeys]) }
	in := sections
	in[secKeys] = nil
	if err := writeKept(repo, in, write); err != nil {
		t.Fatal(err)
	}
	got := keptSectionsOf(t, keptPath(repo))
	for i := range sections {
		if !bytes.Equal(got[i], sections[i]) {
			t.Errorf("section %d: %d bytes, want %d", i, len(got[i]), len(sections[i]))
		}
	}
	other := filepath.Join(t.TempDir(), "verify-kept")
	writeKeptSections(t, other, sections)
	a, _ := os.ReadFile(keptPath(repo))
	b, _ := os.ReadFile(other)
	if !bytes.Equal(a, b) {
		t.Error("writeKept and the test's writer differ")
	}
}

// A verify after a record writes the delta anew and copies the state and
// the keys byte for byte; a verify with nothing changed leaves the file
// as it is, not written again.
func TestKeptDeltaCopiesTheRest(t *testing.T) {
	a, rng := recordedClone(t, 8, 4)
	path := filepath.Join(a.repo.CommonDir(), "evolve", "verify-kept")
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
	if _, err := VerifyWith(a.l, VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if now, err := os.Stat(path); err != nil || !os.SameFile(was, now) {
		t.Errorf("a verify with nothing changed wrote verify-kept again (%v)", err)
	}
	a.record(rng)
	if _, err := VerifyWith(a.l, VerifyOptions{}); err != nil {
		t.Fatal(err)
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
}

// Every verify that reads verify-kept through a mapping (store.MapEvery:
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
	path := filepath.Join(state, "verify-kept")
	// fromGit is the answer from git alone, what verify keeps put back
	// after it
	fromGit := func(o VerifyOptions) string {
		t.Helper()
		saved := map[string][]byte{}
		for _, name := range []string{"verified", "verify-kept"} {
			if data, err := os.ReadFile(filepath.Join(state, name)); err == nil {
				saved[name] = data
			}
		}
		o.FromGit = true
		rep, err := VerifyWith(a.l, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"verified", "verify-kept"} {
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
		t.Error("verify-kept was never mapped: the test reads it as a copy")
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
	path := filepath.Join(a.repo.CommonDir(), "evolve", "verify-kept")
	secs := keptSectionsOf(t, path)
	decoded := func(state []byte) *verifyState {
		st, body, err := decodeHeader(state)
		if err != nil || len(body) < 4 {
			return nil
		}
		k := &keptFile{refs: 1}
		k.sec = secs
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
			rep, err := VerifyWith(a.l, VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := reportText(rep); got != want {
				t.Errorf("byte %d of the state, bit %d: the answer differs\ngot:      %s\nfrom git: %s", i, bit, got, want)
			}
			break
		}
	}
	if changed == 0 {
		t.Fatal("no change to the state that still decodes")
	}
}

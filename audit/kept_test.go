package audit

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/testenv"
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

package store

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// testHead is the head of the files the test's writer writes: its own
// secret.
var testHead = append([]byte(keptMagic), bytes.Repeat([]byte{7}, 16)...)

// keptBytes is a view's file of one generation of sections, with head, as
// the layout says: written here apart from PutKept, which it is compared
// with.
func keptBytes(head []byte, sections [Sections][]byte) []byte {
	b := bytes.Clone(head)
	var table []byte
	for _, s := range sections {
		table = binary.LittleEndian.AppendUint64(table, uint64(len(b)))
		table = binary.LittleEndian.AppendUint64(table, uint64(len(s)))
		b = append(b, s...)
	}
	return appendTable(b, head, table)
}

// appendTable appends to file the table of a generation (the sections'
// places), the file's length and the seal.
func appendTable(file, head, table []byte) []byte {
	table = binary.LittleEndian.AppendUint64(table, uint64(len(file)+len(table)+8+16))
	sum := sha256.Sum256(append(bytes.Clone(head), table...))
	return append(append(file, table...), sum[:16]...)
}

// sections are seven sections named for their place, the n'th of each
// writer.
func sections(n int) [Sections][]byte {
	var s [Sections][]byte
	for i := range s {
		s[i] = []byte(fmt.Sprintf("%s %d", SectionNames[i], n))
	}
	return s
}

// sectionsAt reads the sections of the view's file at path.
func sectionsAt(t *testing.T, path string) [Sections][]byte {
	t.Helper()
	k := OpenKept(path)
	if k == nil {
		t.Fatalf("%s does not read", path)
	}
	defer k.Release()
	var out [Sections][]byte
	for i := range out {
		out[i] = bytes.Clone(k.Section(i))
	}
	return out
}

// bytesParts are parts of the given bytes for the sections named by which.
func bytesParts(s [Sections][]byte, which ...int) [Sections]*Part {
	var p [Sections]*Part
	for _, i := range which {
		p[i] = &Part{Bytes: s[i]}
	}
	return p
}

var verifyParts = []int{SecState, SecKeys, SecDelta, SecObjects}

// The container's table is read as written, and refused when any byte of
// it, of the magic line, of the format or of the secret is changed, or the
// file is cut.
func TestKeptTable(t *testing.T) {
	want := sections(1)
	want[SecKeys] = nil
	data := keptBytes(testHead, want)
	k, ok := parseKept(data)
	if !ok {
		t.Fatal("the table written was refused")
	}
	for i := range want {
		if !bytes.Equal(k.Section(i), want[i]) {
			t.Errorf("section %d: %q, want %q", i, k.Section(i), want[i])
		}
	}
	for i := 0; i < len(data); i++ {
		if i >= keptHead && i < len(data)-keptTail {
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

// A sealed table is refused when its length is not the file's, and when
// it names bytes beyond the file: only a holder of the secret seals one,
// and a reader still reads no byte past the end.
func TestKeptTableLengthAndPlaces(t *testing.T) {
	data := keptBytes(testHead, sections(1))
	moved := append(append(bytes.Clone(data[:keptHead+3]), 'x'), data[keptHead+3:]...)
	if _, ok := parseKept(moved); ok {
		t.Error("a table whose length is not the file's was taken")
	}
	for _, n := range []uint64{1 << 20, 1 << 63} {
		var table []byte
		for range Sections {
			table = binary.LittleEndian.AppendUint64(table, uint64(keptHead))
			table = binary.LittleEndian.AppendUint64(table, n)
		}
		beyond := appendTable(bytes.Clone(testHead), testHead, table)
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("a sealed table naming %d bytes: %v", n, r)
				}
			}()
			if _, ok := parseKept(beyond); ok {
				t.Errorf("a sealed table naming %d bytes was taken", n)
			}
		}()
	}
}

// A file read part way through an append (its length anywhere between
// the two generations' ends) is refused, though the generation appended
// holds, in a section's bytes, a table of its own sealed to a guessed
// secret: a note's text, say, that an attacker wrote to look like one.
func TestKeptAppendReadPartWay(t *testing.T) {
	first := keptBytes(testHead, sections(1))
	// forged is a section whose bytes end in a table sealed to head,
	// naming as the file's length where its own bytes end
	forged := func(head []byte) []byte {
		prefix := []byte("lines, then ")
		var table []byte
		for range Sections {
			table = binary.LittleEndian.AppendUint64(table, uint64(keptHead))
			table = binary.LittleEndian.AppendUint64(table, 1)
		}
		table = binary.LittleEndian.AppendUint64(table, uint64(len(first)+len(prefix)+len(table)+8+16))
		sum := sha256.Sum256(append(bytes.Clone(head), table...))
		return append(append(prefix, table...), sum[:16]...)
	}
	appended := func(lines []byte) []byte {
		k, _ := parseKept(first)
		var table []byte
		for i := range Sections {
			off, n := k.off[i], uint64(len(k.sec[i]))
			if i == SecLines {
				off, n = uint64(len(first)), uint64(len(lines))
			}
			table = binary.LittleEndian.AppendUint64(table, off)
			table = binary.LittleEndian.AppendUint64(table, n)
		}
		return appendTable(append(bytes.Clone(first), lines...), testHead, table)
	}
	guess := append([]byte(keptMagic), bytes.Repeat([]byte{0}, 16)...)
	whole := appended(forged(guess))
	if k, ok := parseKept(whole); !ok || !bytes.Equal(k.Section(SecLines), forged(guess)) || string(k.Section(SecState)) != "state 1" {
		t.Fatal("the file with the generation appended was refused")
	}
	if k, ok := parseKept(first); !ok || string(k.Section(SecLines)) != "lines 1" {
		t.Fatal("the file before the append was refused")
	}
	for n := len(first) + 1; n < len(whole); n++ {
		if _, ok := parseKept(whole[:n]); ok {
			t.Errorf("read at %d bytes of %d: taken", n, len(whole))
		}
	}
	// what the secret keeps out: the same table sealed to the file's own
	// secret is taken where the section's bytes end
	own := appended(forged(testHead))
	if _, ok := parseKept(own[:len(first)+len(forged(testHead))]); !ok {
		t.Error("a table sealed to the file's own secret was refused: the test forges nothing")
	}
}

// PutKept writes what the test's writer does: the two agree on the
// layout.
func TestPutKeptAgrees(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.view")
	want := sections(1)
	want[SecKeys] = bytes.Repeat([]byte("k"), 300<<10)
	want[SecDelta] = nil
	parts := bytesParts(want, SecLines, SecMerged, SecCopies, SecState, SecDelta, SecObjects)
	parts[SecKeys] = &Part{Write: func(w *bufio.Writer) error { _, err := w.Write(want[SecKeys]); return err }}
	if err := PutKept(path, nil, parts); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(written, keptBytes(written[:keptHead], want)) {
		t.Error("PutKept and the test's writer differ")
	}
}

// Each writer writes its own sections and names the others' where the
// file has them: the lines, merged, copies and verify's four, written in
// turn and at once, each read back as its writer last wrote it.
func TestPutKeptKeepsTheOthers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.view")
	writers := [][]int{{SecLines}, {SecMerged}, {SecCopies}, verifyParts}
	var want [Sections][]byte
	for n := 1; n <= 3; n++ {
		for _, own := range writers {
			s := sections(n)
			if err := PutKept(path, nil, bytesParts(s, own...)); err != nil {
				t.Fatal(err)
			}
			for _, i := range own {
				want[i] = s[i]
			}
			if got := sectionsAt(t, path); !equalSections(got, want) {
				t.Fatalf("after the %d'th write of %v: %q, want %q", n, own, got, want)
			}
		}
	}
}

func equalSections(a, b [Sections][]byte) bool {
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// A section a writer keeps as it read it is named where it is while the
// file has it there, and written again from what the writer read once
// the file was written anew since: the writer's sections always come from
// one read. A file that does not read is written anew, with the writer's
// sections alone.
func TestPutKeptKeptSections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.view")
	first := sections(1)
	if err := PutKept(path, nil, bytesParts(first, verifyParts...)); err != nil {
		t.Fatal(err)
	}
	built := OpenKept(path)
	defer built.Release()
	// another writer, then this one: state and keys named where they are
	if err := PutKept(path, nil, bytesParts(sections(2), SecLines)); err != nil {
		t.Fatal(err)
	}
	next := sections(3)
	parts := bytesParts(next, SecDelta, SecObjects)
	parts[SecState], parts[SecKeys] = &Part{Kept: true}, &Part{Kept: true}
	was, _ := os.Stat(path)
	if err := PutKept(path, built, parts); err != nil {
		t.Fatal(err)
	}
	k := OpenKept(path)
	if now, _ := os.Stat(path); !os.SameFile(was, now) {
		t.Error("written anew, not appended to")
	}
	if k.off[SecState] != built.off[SecState] || string(k.Section(SecState)) != "state 1" || string(k.Section(SecDelta)) != "delta 3" || string(k.Section(SecLines)) != "lines 2" {
		t.Errorf("after the append: state %q at %d (was at %d), delta %q, lines %q", k.Section(SecState), k.off[SecState], built.off[SecState], k.Section(SecDelta), k.Section(SecLines))
	}
	k.Release()
	// the file written anew since (another secret): the kept sections
	// are written again, from what was read
	withSlack(t, 0)
	if err := PutKept(path, nil, bytesParts(sections(4), SecLines, SecMerged)); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.Stat(path); os.SameFile(was, now) {
		t.Fatal("not written anew past the slack")
	}
	withSlack(t, 1<<20)
	if err := PutKept(path, built, parts); err != nil {
		t.Fatal(err)
	}
	got := sectionsAt(t, path)
	if string(got[SecState]) != "state 1" || string(got[SecKeys]) != "keys 1" || string(got[SecDelta]) != "delta 3" || string(got[SecLines]) != "lines 4" || string(got[SecMerged]) != "merged 4" {
		t.Errorf("after a write onto a file written anew since: %q", got)
	}
	// a file that does not read: written anew with the writer's alone
	data, _ := os.ReadFile(path)
	data[len(data)-1] ^= 1
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := PutKept(path, nil, bytesParts(sections(5), SecCopies)); err != nil {
		t.Fatal(err)
	}
	want := [Sections][]byte{SecCopies: []byte("copies 5")}
	if got := sectionsAt(t, path); !equalSections(got, want) {
		t.Errorf("after a write onto a damaged file: %q", got)
	}
}

func withSlack(t *testing.T, n int) {
	was := keptSlack
	keptSlack = n
	t.Cleanup(func() { keptSlack = was })
}

// Appends stop once what the generations leave behind outgrows the
// slack: the file is then written anew, no larger than what it names and
// the slack, twice over.
func TestPutKeptSlack(t *testing.T) {
	withSlack(t, 64<<10)
	path := filepath.Join(t.TempDir(), "ledger.view")
	big := sections(0)
	big[SecState] = bytes.Repeat([]byte("s"), 100<<10)
	if err := PutKept(path, nil, bytesParts(big, SecState)); err != nil {
		t.Fatal(err)
	}
	renames, appends := 0, 0
	was, _ := os.Stat(path)
	for n := 1; n <= 40; n++ {
		s := sections(n)
		s[SecLines] = bytes.Repeat([]byte{byte(n)}, 20<<10)
		if err := PutKept(path, nil, bytesParts(s, SecLines)); err != nil {
			t.Fatal(err)
		}
		now, _ := os.Stat(path)
		if os.SameFile(was, now) {
			appends++
		} else {
			renames++
		}
		if now.Size() > 2*int64(keptSlack)+2*(120<<10)+4096 {
			t.Fatalf("after %d writes the file is %d bytes", n, now.Size())
		}
		if got := sectionsAt(t, path); !bytes.Equal(got[SecLines], s[SecLines]) || !bytes.Equal(got[SecState], big[SecState]) {
			t.Fatalf("after %d writes: the sections are not the last written", n)
		}
		was = now
	}
	if renames == 0 || appends == 0 {
		t.Errorf("%d appends, %d written anew", appends, renames)
	}
}

// A section whose writer fails part way leaves the file's sections as
// they were: the table appended names them.
func TestPutKeptFailedPart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.view")
	if err := PutKept(path, nil, bytesParts(sections(1), SecLines, SecMerged)); err != nil {
		t.Fatal(err)
	}
	var parts [Sections]*Part
	parts[SecLines] = &Part{Write: func(w *bufio.Writer) error {
		w.Write([]byte("part of a view"))
		return fmt.Errorf("the view is too large")
	}}
	if err := PutKept(path, nil, parts); err == nil {
		t.Error("no error from a part that failed")
	}
	if got := sectionsAt(t, path); string(got[SecLines]) != "lines 1" || string(got[SecMerged]) != "merged 1" {
		t.Errorf("after a part that failed: %q", got)
	}
}

// Writers of every section at once, and readers beside them: each read
// takes whole generations, never a part of one (it reads under a shared
// lock: a read part way through would be no file at all), and each
// writer's sections come from one write of it.
func TestPutKeptAtOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a file renamed over while open")
	}
	path := filepath.Join(t.TempDir(), "ledger.view")
	withSlack(t, 32<<10)
	if err := PutKept(path, nil, bytesParts(sections(0), SecLines, SecMerged, SecCopies, SecState, SecKeys, SecDelta, SecObjects)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	bad := make(chan string, 100)
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := OpenKept(path)
				if k == nil {
					bad <- "the view read part way through a write"
					return
				}
				// verify's four were written together
				n := strings.TrimPrefix(string(k.Section(SecState)), "state ")
				for _, i := range verifyParts {
					if got := strings.TrimRight(strings.TrimPrefix(string(k.Section(i)), SectionNames[i]+" "), " "); got != strings.TrimRight(n, " ") {
						bad <- fmt.Sprintf("verify's sections mixed: %q, %q", k.Section(SecState), k.Section(i))
						k.Release()
						return
					}
				}
				k.Release()
			}
		}()
	}
	writers := [][]int{{SecLines}, {SecMerged}, {SecCopies}, verifyParts}
	var wrote sync.WaitGroup
	var n atomic.Int32
	for w, own := range writers {
		wrote.Add(1)
		go func() {
			defer wrote.Done()
			for i := 0; i < 10; i++ {
				s := sections(10*w + i + 1)
				for j := range s {
					s[j] = append(s[j], strings.Repeat(" ", 3000)...)
				}
				if PutKept(path, nil, bytesParts(s, own...)) == nil {
					n.Add(1)
				}
			}
		}()
	}
	wrote.Wait()
	close(stop)
	wg.Wait()
	close(bad)
	for msg := range bad {
		t.Error(msg)
	}
	if n.Load() == 0 {
		t.Error("nothing written")
	}
}

// sectionAt is section i of the view's file at path: none when there is
// no file that reads.
func sectionAt(t *testing.T, path string, i int) []byte {
	t.Helper()
	k := OpenKept(path)
	defer k.Release()
	return bytes.Clone(k.Section(i))
}

// putSection puts data in section i of the view's file at path (none: the
// section absent), as its writer would.
func putSection(t *testing.T, path string, i int, data []byte) {
	t.Helper()
	var parts [Sections]*Part
	parts[i] = &Part{Bytes: data}
	if err := PutKept(path, nil, parts); err != nil {
		t.Fatal(err)
	}
}

// viewBytes is the lines section of the view's file at path: the view's
// own layout (viewfile.go).
func viewBytes(path string) ([]byte, error) {
	k := OpenKept(path)
	if k == nil {
		return nil, fmt.Errorf("%s: no view's file that reads", path)
	}
	defer k.Release()
	return bytes.Clone(k.Section(SecLines)), nil
}

// writeView writes at path a view's file whose lines section is data, and
// no other.
func writeView(path string, data []byte, mode os.FileMode) error {
	return os.WriteFile(path, keptBytes(testHead, [Sections][]byte{SecLines: data}), mode)
}

// A part of more than one kind, or kept from no file read (none, or one
// let go), is refused: nothing is written, where a section would
// otherwise be emptied without a word.
func TestPutKeptRefusesMisusedParts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.view")
	if err := PutKept(path, nil, bytesParts(sections(1), verifyParts...)); err != nil {
		t.Fatal(err)
	}
	released := OpenKept(path)
	released.Release()
	write := func(w *bufio.Writer) error { return nil }
	for name, c := range map[string]struct {
		built *Kept
		part  *Part
	}{
		"kept from no file":       {nil, &Part{Kept: true}},
		"kept from a file let go": {released, &Part{Kept: true}},
		"written and bytes":       {nil, &Part{Write: write, Bytes: []byte("x")}},
		"kept and bytes":          {nil, &Part{Kept: true, Bytes: []byte("x")}},
	} {
		var parts [Sections]*Part
		parts[SecState] = c.part
		if err := PutKept(path, c.built, parts); err == nil {
			t.Errorf("%s: written", name)
		}
		if got := sectionAt(t, path, SecState); string(got) != "state 1" {
			t.Errorf("%s: the state is %q", name, got)
		}
	}
}

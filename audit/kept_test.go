package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
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

// testHead is the head of the files the test's writer writes: its own
// secret.
var testHead = append(append([]byte(keptMagic), keptFormat), bytes.Repeat([]byte{7}, 16)...)

// keptBytes is a verify-kept of one generation of sections, with head, as
// the layout says: written here apart from writeKept, which it is
// compared with.
func keptBytes(head []byte, sections [keptSections][]byte) []byte {
	b := bytes.Clone(head)
	var table []byte
	for _, s := range sections {
		table = appendLE64(appendLE64(table, uint64(len(b))), uint64(len(s)))
		b = append(b, s...)
	}
	return appendTable(b, head, table)
}

// appendTable appends to file the table of a generation (the sections'
// places), the file's length and the seal.
func appendTable(file, head, table []byte) []byte {
	table = appendLE64(table, uint64(len(file)+len(table)+8+16))
	sum := sha256.Sum256(append(bytes.Clone(head), table...))
	return append(append(file, table...), sum[:16]...)
}

// writeKeptSections writes a verify-kept of sections at path.
func writeKeptSections(t *testing.T, path string, sections [keptSections][]byte) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, keptBytes(testHead, sections), 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendLE64(b []byte, v uint64) []byte {
	for i := 0; i < 8; i++ {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// The container's table is read as written, and refused when any byte of
// it, of the magic line, of the format or of the secret is changed, or the
// file is cut.
func TestKeptTable(t *testing.T) {
	want := [keptSections][]byte{[]byte("state"), nil, []byte("the delta"), []byte("objects")}
	data := keptBytes(testHead, want)
	k, ok := parseKept(data)
	if !ok {
		t.Fatal("the table written was refused")
	}
	for i := range want {
		if !bytes.Equal(k.sec[i], want[i]) {
			t.Errorf("section %d: %q, want %q", i, k.sec[i], want[i])
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
	secs := [keptSections][]byte{[]byte("state"), []byte("keys"), []byte("delta"), []byte("objects")}
	data := keptBytes(testHead, secs)
	moved := append(append(bytes.Clone(data[:keptHead+3]), 'x'), data[keptHead+3:]...)
	if _, ok := parseKept(moved); ok {
		t.Error("a table whose length is not the file's was taken")
	}
	for _, n := range []uint64{1 << 20, 1 << 63} {
		var table []byte
		for range keptSections {
			table = appendLE64(appendLE64(table, uint64(keptHead)), n)
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
	first := keptBytes(testHead, [keptSections][]byte{[]byte("state"), []byte("keys"), []byte("delta"), []byte("objects")})
	// forged is a delta whose bytes end in a table sealed to head, naming
	// as the file's length where its own bytes end
	forged := func(head []byte) []byte {
		prefix := []byte("delta, then ")
		var table []byte
		for range keptSections {
			table = appendLE64(appendLE64(table, uint64(keptHead)), 1)
		}
		table = appendLE64(table, uint64(len(first)+len(prefix)+len(table)+8+16))
		sum := sha256.Sum256(append(bytes.Clone(head), table...))
		return append(append(prefix, table...), sum[:16]...)
	}
	appended := func(delta []byte) []byte {
		var table []byte
		table = appendLE64(appendLE64(table, uint64(keptHead)), 5)
		table = appendLE64(appendLE64(table, uint64(keptHead)+5), 4)
		table = appendLE64(appendLE64(table, uint64(len(first))), uint64(len(delta)))
		table = appendLE64(appendLE64(table, uint64(len(first)+len(delta))), 3)
		return appendTable(append(append(bytes.Clone(first), delta...), "obj"...), testHead, table)
	}
	guess := append(append([]byte(keptMagic), keptFormat), bytes.Repeat([]byte{0}, 16)...)
	whole := appended(forged(guess))
	if k, ok := parseKept(whole); !ok || string(k.sec[secObjects]) != "obj" || string(k.sec[secState]) != "state" {
		t.Fatal("the file with the generation appended was refused")
	}
	if k, ok := parseKept(first); !ok || string(k.sec[secDelta]) != "delta" {
		t.Fatal("the file before the append was refused")
	}
	for n := len(first) + 1; n < len(whole); n++ {
		if _, ok := parseKept(whole[:n]); ok {
			t.Errorf("read at %d bytes of %d: taken", n, len(whole))
		}
	}
	// what the secret keeps out: the same table sealed to the file's own
	// secret is taken where the delta's bytes end
	own := appended(forged(testHead))
	if _, ok := parseKept(own[:len(first)+len(forged(testHead))]); !ok {
		t.Error("a table sealed to the file's own secret was refused: the test forges nothing")
	}
}

// writeKept writes what the test's writer does: the two agree on the
// layout.
func TestWriteKeptAgrees(t *testing.T) {
	repo := emptyRepo(t)
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
	written, err := os.ReadFile(keptPath(repo))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(written, keptBytes(written[:keptHead], sections)) {
		t.Error("writeKept and the test's writer differ")
	}
}

// A verify after a record appends the delta and the objects, and names the
// state and the keys as they were; a verify with nothing changed leaves
// the file as it is, not written again.
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
			t.Errorf("%s: a verify with nothing changed wrote verify-kept: %d bytes, then %d (%v)", when, len(before), len(now), err)
		}
	}
	unchanged("after a verify that read every summary")
	a.record(rng)
	if _, err := VerifyWith(a.l, VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if now, err := os.Stat(path); err != nil || !os.SameFile(was, now) || now.Size() <= was.Size() {
		t.Errorf("a verify after a record did not append to verify-kept (%v)", err)
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

// appendKept appends only to the file it read, as it read it, and only
// while what the generations leave behind stays within the slack; else the
// caller writes the file anew.
func TestKeptAppendsOnlyToWhatItRead(t *testing.T) {
	repo := emptyRepo(t)
	secs := [keptSections][]byte{[]byte("state"), []byte("keys"), []byte("delta"), []byte("objects")}
	copied := [keptSections]bool{secState: true, secKeys: true}
	read := func() *keptFile {
		t.Helper()
		k := openKept(repo)
		if k == nil {
			t.Fatal("verify-kept does not read")
		}
		return k
	}
	if err := writeKept(repo, secs, [keptSections]func(*bufio.Writer){}); err != nil {
		t.Fatal(err)
	}
	built := read()
	next := secs
	next[secDelta] = []byte("delta 2")
	if !appendKept(repo, built, next, copied) {
		t.Fatal("no append to the file as it was read")
	}
	if k := read(); string(k.sec[secDelta]) != "delta 2" || string(k.sec[secState]) != "state" || k.off[secState] != built.off[secState] {
		t.Errorf("after the append: %q, %q at %d", k.sec[secDelta], k.sec[secState], k.off[secState])
	}
	// appended to since it was read
	if appendKept(repo, built, next, copied) {
		t.Error("appended to a file appended to since it was read")
	}
	// replaced since it was read, by a file of the same size (another
	// secret)
	if err := writeKept(repo, secs, [keptSections]func(*bufio.Writer){}); err != nil {
		t.Fatal(err)
	}
	built = read()
	other := secs
	other[secState] = []byte("STATE")
	if err := writeKept(repo, other, [keptSections]func(*bufio.Writer){}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(keptPath(repo)); err != nil || fi.Size() != int64(len(built.data)) {
		t.Fatalf("the file written anew is not of the size read (%v)", err)
	}
	if appendKept(repo, built, next, copied) {
		t.Error("appended to a file replaced since it was read")
	}
	// what the generations leave behind past the slack
	built = read()
	big := next
	big[secDelta] = bytes.Repeat([]byte("d"), keptSlack/2)
	appends := 0
	for appendKept(repo, built, big, copied) {
		appends++
		built = read()
		if appends > 10 {
			t.Fatal("appended past the slack")
		}
	}
	if fi, err := os.Stat(keptPath(repo)); err != nil || fi.Size() > 2*keptSlack+4*int64(len(big[secDelta])) {
		t.Errorf("after %d appends the file is %d bytes (%v)", appends, fi.Size(), err)
	}
	if appends == 0 {
		t.Error("no append within the slack")
	}
}

// Verifies appending at once, and readers beside them: each read takes
// one whole generation, the first file's or one appended, never a part
// of one (it reads under a shared lock: a read part way through would
// be a verify from git alone) or a mix of two.
func TestKeptAppendsAtOnce(t *testing.T) {
	repo := emptyRepo(t)
	base := [keptSections][]byte{[]byte("state"), []byte("keys"), []byte("delta -1"), []byte("objects -1")}
	if err := writeKept(repo, base, [keptSections]func(*bufio.Writer){}); err != nil {
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
				data, err := store.ReadStateFile(keptPath(repo), maxKeptFile)
				if err != nil {
					bad <- err.Error()
					return
				}
				k, ok := parseKept(data)
				if !ok {
					bad <- fmt.Sprintf("a file of %d bytes read as none", len(data))
					return
				}
				d, o := string(k.sec[secDelta]), string(k.sec[secObjects])
				if string(k.sec[secState]) != "state" || string(k.sec[secKeys]) != "keys" || strings.TrimPrefix(d, "delta") != strings.TrimPrefix(o, "objects") {
					bad <- fmt.Sprintf("a generation mixed: %q, %q", d, o)
					return
				}
			}
		}()
	}
	var appended sync.WaitGroup
	var n atomic.Int32
	for w := 0; w < 4; w++ {
		appended.Add(1)
		go func() {
			defer appended.Done()
			for i := 0; i < 10; i++ {
				built := openKept(repo)
				if built == nil {
					bad <- "verify-kept read part way through an append"
					return
				}
				parts := base
				parts[secDelta] = []byte(fmt.Sprintf("delta %d.%d%s", w, i, strings.Repeat(" ", 5000)))
				parts[secObjects] = []byte(fmt.Sprintf("objects %d.%d%s", w, i, strings.Repeat(" ", 5000)))
				if appendKept(repo, built, parts, [keptSections]bool{secState: true, secKeys: true}) {
					n.Add(1)
				}
				built.release()
			}
		}()
	}
	appended.Wait()
	close(stop)
	wg.Wait()
	close(bad)
	for msg := range bad {
		t.Error(msg)
	}
	if n.Load() == 0 {
		t.Error("no verify appended")
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

package audit

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/ledger/store"
)

func sampleDelta() *deltaState {
	st := sampleState()
	return &deltaState{
		Binary: st.Binary, Token: [16]byte{1, 2, 3}, Source: commit(7), Head: commit(9), Packs: "p", History: "h", Accepted: "a",
		Records: 3, Notes: 2, Added: st.Sums.Sums,
		Found: sumFindings{
			Lines:     st.Sums.Lines,
			Schema:    []Finding{{Severity: Breach, Kind: "schema", Message: "m", Cycle: 3, ID: "x", Commit: "c", at: 3}},
			IDs:       []Finding{{Severity: Breach, Kind: "duplicate-id", Message: "i", Cycle: 2, ID: "z", Commit: "e", Commits: []string{"e", "f"}, at: 2}},
			Chain:     []Finding{{Severity: Notice, Kind: "deleted", Message: "d", ID: "y", NotesCommit: "n", Original: "o", Ref: "r", at: -2}},
			Unchained: 4,
			Trailers:  []trailerFinding{{Trailer: st.Trailers[0], Finding: Finding{Severity: Notice, Kind: "unrecorded", Message: "u", ID: "a"}}},
		},
	}
}

func encodedDelta(st *deltaState) []byte {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	encodeDelta(w, st)
	w.Flush()
	return buf.Bytes()
}

// The delta reads back as written; cut short, longer, of another format or
// with any byte changed, it does not.
func TestDeltaRoundTrip(t *testing.T) {
	st := sampleDelta()
	data := encodedDelta(st)
	got, err := decodeDelta(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, st) {
		t.Errorf("decodeDelta(encodeDelta(st)) = %+v, want %+v", got, st)
	}
	for n := 0; n < len(data); n++ {
		if _, err := decodeDelta(data[:n]); err == nil {
			t.Fatalf("a delta cut at byte %d of %d decodes", n, len(data))
		}
	}
	if _, err := decodeDelta(append(slices.Clone(data), 0)); err == nil {
		t.Error("a delta with a byte more decodes")
	}
	for i := len(deltaMagic); i < len(data); i++ {
		changed := slices.Clone(data)
		changed[i] ^= 0x10
		if _, err := decodeDelta(changed); err == nil {
			t.Fatalf("a delta with byte %d of %d changed decodes", i, len(data))
		}
	}
}

func FuzzDecodeDelta(f *testing.F) {
	f.Add(encodedDelta(sampleDelta()))
	f.Add(encodedDelta(&deltaState{}))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeDelta(data)
		if err != nil {
			return
		}
		again, err := decodeDelta(encodedDelta(st))
		if err != nil || !reflect.DeepEqual(again, st) {
			t.Errorf("decoded, encoded and decoded again: %+v, %v; want %+v", again, err, st)
		}
	})
}

// numberedKeys writes the keys file, with token, of n records id01, id02,
// ..., each of cycle i on commit i, and of the extra entries.
func numberedKeys(t *testing.T, n int, token [16]byte, extra ...store.Entry) (string, []byte) {
	t.Helper()
	var entries []store.Entry
	for i := 1; i <= n; i++ {
		entries = append(entries, store.Entry{Record: rec(fmt.Sprintf("id%02d", i), i, nil), Commit: commit(byte(i))})
	}
	return keysOf(t, sums(append(entries, extra...)...).byKey(), token)
}

// keysOf writes the keys file of x with token to a file and maps it.
func keysOf(t testing.TB, x *sumIndex, token [16]byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	encodeKeys(w, token, x)
	w.Flush()
	path := filepath.Join(t.TempDir(), "verify-keys")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, buf.Bytes()
}

// Every record is found in the keys file with its first summary and the
// commits and digests of all its copies; a key it does not hold is not
// found, however full the table.
func TestKeysFind(t *testing.T) {
	var entries []store.Entry
	for i := 1; i <= 300; i++ {
		r := rec(fmt.Sprintf("id%03d", i), i, nil)
		entries = append(entries, store.Entry{Record: r, Commit: commit(byte(i))})
		if i%50 == 0 { // a copy on another commit
			entries = append(entries, store.Entry{Record: r, Commit: commit(byte(i + 1))})
		}
	}
	noID := rec("", 7, nil)
	entries = append(entries, store.Entry{Record: noID, Commit: commit(3)})
	x := sums(entries...).byKey()
	token := [16]byte{9}
	path, _ := keysOf(t, x, token)
	keys, ok := openKeys(path, token)
	if !ok {
		t.Fatal("openKeys refused the file it wrote")
	}
	found := 0
	x.each(func(es []*recSum) {
		found++
		e, ok := keys.find(es[0].key())
		if !ok {
			t.Fatalf("key %q not found", es[0].key())
		}
		first := recSum{Commit: es[0].Commit, Digest: es[0].Digest, Cycle: es[0].Cycle, Result: es[0].Result, CommitDigest: es[0].CommitDigest, CommitBin: es[0].CommitBin}
		if e.first != first {
			t.Errorf("key %q: first %+v, want %+v", es[0].key(), e.first, first)
		}
		if len(e.commits) != len(es) {
			t.Errorf("key %q: %d copies, want %d", es[0].key(), len(e.commits), len(es))
		}
		for i, s := range es {
			if e.commits[i] != s.Commit || e.digests[i] != s.Digest {
				t.Errorf("key %q copy %d: %s %s, want %s %s", es[0].key(), i, e.commits[i], e.digests[i], s.Commit, s.Digest)
			}
		}
	})
	if found != 301 {
		t.Errorf("%d keys, want 301", found)
	}
	for _, k := range []string{"id000", "id301", "", "id00", noID.ID} {
		if _, ok := keys.find(k); ok {
			t.Errorf("key %q found", k)
		}
	}
	for n := -1; n <= 302; n++ {
		if want := n >= 1 && n <= 300; keys.hasCycle(n) != want {
			t.Errorf("hasCycle(%d) = %v, want %v", n, !want, want)
		}
	}
}

// New findings go among the kept ones by their places, the kept first
// where two take one.
func TestMergeAt(t *testing.T) {
	f := func(at int, kind string) Finding { return Finding{Kind: kind, at: at} }
	got := mergeAt([]Finding{f(1, "a"), f(4, "a"), f(4, "a"), f(9, "a")}, []Finding{f(0, "b"), f(4, "b"), f(5, "b"), f(12, "b")})
	var s []string
	for _, x := range got {
		s = append(s, fmt.Sprintf("%d%s", x.at, x.Kind))
	}
	if want := "0b 1a 4a 4a 4b 5b 9a 12b"; strings.Join(s, " ") != want {
		t.Errorf("mergeAt: %s, want %s", strings.Join(s, " "), want)
	}
}

// A keys file of another token, cut short, or with any byte changed is
// not opened.
func TestKeysDamaged(t *testing.T) {
	testenv.Slow(t)
	defer func(b int) { keysBlock = b }(keysBlock)
	keysBlock = 64 // many blocks, so that lookups cross some and not others
	token := [16]byte{1}
	path, data := numberedKeys(t, 40, token, store.Entry{Record: rec("id07", 7, nil), Commit: commit(99)})
	if _, ok := openKeys(path, [16]byte{2}); ok {
		t.Error("a keys file of another token opened")
	}
	// What every lookup answers: each key of the file, keys it lacks, and
	// every cycle from one below the first to one past the last.
	answers := func(k *keysFile) string {
		var b strings.Builder
		for i := 0; i <= 42; i++ {
			e, ok := k.find(fmt.Sprintf("id%02d", i))
			fmt.Fprintf(&b, "%v %+v %v %v\n", ok, e.first, e.commits, e.digests)
		}
		for n := -1; n <= 42; n++ {
			fmt.Fprintf(&b, "%d:%v ", n, k.hasCycle(n))
		}
		return b.String()
	}
	k, ok := openKeys(path, token)
	if !ok {
		t.Fatal("openKeys refused the file it wrote")
	}
	want := answers(k)
	if k.damaged() {
		t.Fatal("the file written reads as damaged")
	}
	k.close()
	if len(data) < 20*keysBlock {
		t.Fatalf("the file is %d bytes: too few blocks for the test", len(data))
	}
	for n := 0; n < len(data); n++ {
		if err := os.WriteFile(path, data[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok := openKeys(path, token); ok {
			t.Fatalf("a keys file cut at byte %d of %d opened", n, len(data))
		}
	}
	// A changed byte is refused when the file is opened, or found damaged
	// by the lookup that reads it; no lookup answers otherwise than the
	// file written unless the file then says it is damaged.
	lazily := 0
	for i := range data {
		changed := slices.Clone(data)
		changed[i] ^= 0x04
		if err := os.WriteFile(path, changed, 0o644); err != nil {
			t.Fatal(err)
		}
		k, ok := openKeys(path, token)
		if !ok {
			continue
		}
		got := answers(k)
		if k.damaged() {
			lazily++
		} else if got != want {
			t.Fatalf("byte %d of %d changed: the lookups answer otherwise, and the file is not found damaged", i, len(data))
		}
		k.close()
	}
	if lazily == 0 {
		t.Error("no damage was found by a lookup: the blocks are not checked as read")
	}
}

// A lookup reads and checks only the blocks it needs.
func TestKeysCheckedAsRead(t *testing.T) {
	defer func(b int) { keysBlock = b }(keysBlock)
	keysBlock = 64
	token := [16]byte{3}
	path, _ := numberedKeys(t, 40, token)
	k, ok := openKeys(path, token)
	if !ok {
		t.Fatal("openKeys refused the file it wrote")
	}
	defer k.close()
	count := func() int {
		n := 0
		for _, c := range k.checked {
			if c {
				n++
			}
		}
		return n
	}
	opened := count()
	if _, ok := k.find("id17"); !ok {
		t.Fatal("id17 not found")
	}
	// A slot of the table, and the entry (about 170 bytes: up to four
	// blocks of 64).
	if after := count(); after <= opened || after > opened+5 {
		t.Errorf("one lookup checked %d blocks more than the %d of the open, of %d", after-opened, opened, len(k.checked))
	}
}

// readBounded reads a file up to its bound, and no file past it.
func TestReadBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if _, ok := readBounded(path, 4); ok {
		t.Error("a missing file read")
	}
	for size, want := range map[int]bool{0: true, 4: true, 5: false} {
		if err := os.WriteFile(path, bytes.Repeat([]byte("x"), size), 0o644); err != nil {
			t.Fatal(err)
		}
		if data, ok := readBounded(path, 4); ok != want || (ok && len(data) != size) {
			t.Errorf("a file of %d bytes, bound 4: %d bytes, %v; want %v", size, len(data), ok, want)
		}
	}
}

// A file whose block sums hold but whose table names no entry, or whose
// entry does not parse, is found damaged by the lookup that reads it: a
// file written otherwise than by encodeKeys changes no answer either.
func TestKeysSoundButWrong(t *testing.T) {
	token := [16]byte{4}
	path, data := numberedKeys(t, 5, token)
	k, ok := openKeys(path, token)
	if !ok {
		t.Fatal("openKeys refused the file it wrote")
	}
	slot := -1 // the table slot of id03
	for i := uint64(0); i < k.slots; i++ {
		off := int(binary.LittleEndian.Uint32(data[k.tableStart+4*int(i):]))
		if off != 0 && bytes.HasPrefix(data[off:], []byte("\x00\x04id03")) {
			slot = k.tableStart + 4*int(i)
		}
	}
	entriesAt, tableStart := k.entries, k.tableStart
	k.close()
	if slot < 0 {
		t.Fatal("id03's slot not found")
	}
	resum := resumKeys
	if !bytes.Equal(resum(data), data) {
		t.Fatal("resum changes the file written")
	}
	for name, change := range map[string]func(b []byte){
		"an offset into the header":       func(b []byte) { binary.LittleEndian.PutUint32(b[slot:], uint32(entriesAt-1)) },
		"an offset into the table":        func(b []byte) { binary.LittleEndian.PutUint32(b[slot:], uint32(tableStart)) },
		"an entry whose key does not end": func(b []byte) { off := binary.LittleEndian.Uint32(b[slot:]); b[off] = 0xff },
	} {
		changed := slices.Clone(data)
		change(changed)
		if err := os.WriteFile(path, resum(changed), 0o644); err != nil {
			t.Fatal(err)
		}
		k, ok := openKeys(path, token)
		if !ok {
			t.Fatalf("%s: the file did not open", name)
		}
		if _, found := k.find("id03"); found || !k.damaged() {
			t.Errorf("%s: found %v, damaged %v; want not found, damaged", name, found, k.damaged())
		}
		k.close()
	}
}

// resumKeys writes the block sums of a changed keys file anew, as a writer
// would.
func resumKeys(changed []byte) []byte {
	n := len(changed)
	nsums := int(binary.LittleEndian.Uint32(changed[n-8:]))
	covered := n - 8 - 4*nsums
	out := slices.Clone(changed[:covered])
	var tail []byte
	for at := 0; at < covered; at += keysBlock {
		tail = binary.LittleEndian.AppendUint32(tail, crc32.Checksum(out[at:min(at+keysBlock, covered)], castagnoliTable()))
	}
	tail = binary.LittleEndian.AppendUint32(tail, uint32(nsums))
	out = append(out, tail...)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(tail, castagnoliTable()))
}

// A keys file of another format, its sums sound, is not opened.
func TestKeysOtherFormat(t *testing.T) {
	token := [16]byte{5}
	path, data := numberedKeys(t, 5, token)
	if !bytes.Equal(resumKeys(data), data) {
		t.Fatal("resumKeys changes the file written")
	}
	for _, format := range []byte{keysFormat - 1, keysFormat + 1} {
		changed := slices.Clone(data)
		changed[len(keysMagic)] = format
		if err := os.WriteFile(path, resumKeys(changed), 0o644); err != nil {
			t.Fatal(err)
		}
		if k, ok := openKeys(path, token); ok {
			k.close()
			t.Errorf("a keys file of format %d opened", format)
		}
	}
}

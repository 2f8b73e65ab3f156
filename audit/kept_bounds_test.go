package audit

import (
	"bufio"
	"bytes"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// Fields of odd shapes (upper-case hex, short hex, empty, prev links of
// other forms) come back byte for byte, keyed and not, and in the delta.
func TestKeptOddShapesRoundTrip(t *testing.T) {
	st := sampleState()
	ss := st.Sums.Sums
	ss = append(ss,
		recSum{Commit: commit(40), ID: strings.ToUpper(hexID), Digest: hexDigest, Cycle: 7, Result: "", Prev: ":", Timestamp: ""},
		recSum{Commit: commit(41), ID: hexID[:19], Digest: hexDigest[:31], Cycle: 8, Result: "improved", Prev: strings.ToUpper(hexID) + ":" + hexDigest, By: "", Host: "x"},
		recSum{Commit: commit(42), ID: "a:b", Digest: "c", Cycle: 9, Prev: hexID[:19] + ":" + hexDigest[:31], CommitDigest: strings.Repeat("z", 32)},
		recSum{Commit: commit(43), ID: "q", Digest: "d", Cycle: 10, Prev: "a:b:c", By: "Bob", Host: "box"},
		recSum{Commit: commit(44), Digest: hexDigest, Cycle: 11, Prev: "q:d", Result: "quarantined"},
	)
	sortSums(ss)
	st.Sums.Sums = ss
	got, err := decodeState(encoded(st))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, st) {
		t.Errorf("odd shapes: %+v\nwant %+v", got.Sums.Sums, st.Sums.Sums)
	}
	x := st.Sums.byKey()
	token := [16]byte{1, 2, 3}
	path, _ := keysOf(t, x, token)
	st.Keyed, st.Token = true, token
	got, err = decodeStateWith(encodedWith(st, x.head), func(tok [16]byte) (*keysFile, bool) { return openKeys(path, tok) })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, st) {
		t.Errorf("odd shapes keyed: %+v\nwant %+v", got.Sums.Sums, st.Sums.Sums)
	}
	d := sampleDelta()
	d.Added = ss
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	encodeDelta(w, d)
	w.Flush()
	gd, err := decodeDelta(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gd.Added, d.Added) {
		t.Errorf("odd shapes in the delta: %+v", gd.Added)
	}
}

// A verify-state of 80 bytes (its CRC made to hold) that says it holds
// 1<<20 summaries makes no more room than its bytes can fill.
func TestStateCountBoundedByItsBytes(t *testing.T) {
	st := &verifyState{Binary: "b", Sums: &ledgerSums{}}
	data := encoded(st)
	// the summaries' count is the uvarint after notes' count: find "\x00\x00" (Keyed=0, Notes=0, n=0)
	body := data[:len(data)-4]
	// magic, format, Binary "b", Source (20), Packs "": then Keyed, Notes, n
	i := len(verifyStateMagic) + 1 + 2 + 20 + 1
	if !bytes.Equal(body[i:i+3], []byte{0, 0, 0}) {
		t.Fatalf("layout %q", body[i:])
	}
	// Keyed false (0), Notes 0, n -> 1<<20 (uvarint 0x80 0x80 0x40)
	crafted := append(append(append([]byte{}, body[:i+2]...), 0x80, 0x80, 0x40), body[i+3:]...)
	crafted = resumState(append(crafted, 0, 0, 0, 0))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := decodeState(crafted)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("decoded")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
		t.Errorf("a %d-byte verify-state: %d bytes allocated", len(crafted), n)
	}
}

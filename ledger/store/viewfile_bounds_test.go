package store

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
)

// deflateBytes is b compressed as a view block is.
func deflateBytes(b []byte) []byte {
	var packed bytes.Buffer
	w, _ := flate.NewWriter(&packed, flate.BestCompression)
	w.Write(b)
	w.Close()
	return packed.Bytes()
}

// A line shorter than a commit's 40 hex digits that says its commit is in
// it (a block whose CRC holds) is read past, not sliced beyond its text.
func TestViewLineShorterThanItsCommitPlace(t *testing.T) {
	var d []byte
	d = binary.AppendVarint(d, 1)   // cycle
	d = binary.AppendUvarint(d, 30) // text length (< 40)
	d = append(d, "012345678901234567890123456789"...)
	d = binary.AppendUvarint(d, 5) // commit place (nonzero)
	for i := 0; i < 4; i++ {       // summary fields: 0, 0 (empty, raw)
		d = binary.AppendUvarint(d, 0)
		d = binary.AppendUvarint(d, 0)
	}
	if len(d) < minViewLine {
		t.Fatal("line too short for the table's check")
	}
	raw := deflateBytes(d)
	notes := gitstore.Hash{9}
	e := blockEntry{size: len(raw), inflated: len(d), n: 1, lo: 1, hi: 1, sum: crc32.Checksum(raw, castagnoli())}
	path := filepath.Join(t.TempDir(), "ledger.view")
	if err := writeView(path, craftView(notes, [][]byte{raw}, []blockEntry{e}), 0o600); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("reading a crafted view panicked: %v", r)
		}
	}()
	if v, err := readView(path); err == nil && v != nil {
		t.Errorf("a view whose line holds no commit where it says was read")
	}
}

// An unreadable note's line cut out of the view whole (each carries its own
// CRC; the file shorter, the tables moved with it) is seen: the view is
// read past, not read with one error fewer.
func TestViewErrorCutOut(t *testing.T) {
	smallBlocks(t, 600)
	v := testView(30)
	v.errors = append(v.errors, &NoteError{Commit: gitstore.Hash{4}, Line: 1, Text: "{also bad", Err: fmt.Errorf("worse")})
	_, data := saveView(t, v)
	foot := data[len(data)-viewFooter:]
	lay, _ := layout(data, foot, len(data))
	// the last error record: 32 + len(text) + len(msg) + 4 bytes before the quarantine table
	recLen := 32 + len("{also bad") + len("worse") + 4
	cut := append(bytes.Clone(data[:lay.qtable-recLen]), data[lay.qtable:]...)
	path := filepath.Join(t.TempDir(), "ledger.view")
	if err := writeView(path, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readView(path)
	if err != nil || got == nil {
		return // read past: sound
	}
	t.Errorf("a view with an error record cut out was read: %d errors, saved with %d", len(got.errors), len(v.errors))
	tail, _, _ := readViewTail(path, v.notes, 3)
	if tail != nil {
		t.Errorf("readViewTail too: %d errors", len(tail.errors))
	}
}

// A table row (its CRC made to hold) saying 262,144 lines for an 8 KB
// block that is not even DEFLATE costs no room for them: the block is
// checked first.
func TestViewBlockRowLiesAboutItsLines(t *testing.T) {
	raw := bytes.Repeat([]byte{0x5a}, 8<<10) // not even DEFLATE
	inflated := 8 << 20
	e := blockEntry{size: len(raw), inflated: inflated, n: inflated / minViewLine, lo: 1, hi: 1, sum: 1}
	notes := gitstore.Hash{9}
	path := filepath.Join(t.TempDir(), "ledger.view")
	data := craftView(notes, [][]byte{raw}, []blockEntry{e})
	if err := writeView(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tail, _, _ := readViewTail(path, notes, 1)
	runtime.ReadMemStats(&after)
	if tail != nil {
		t.Fatal("read")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("a %d-byte view file whose block does not even hold its CRC: %d bytes allocated to read its last line", len(data), n)
	}
}

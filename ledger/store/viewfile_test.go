package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// smallBlocks makes the view's blocks close at size bytes for the test,
// so that a small ledger's view has many.
func smallBlocks(t testing.TB, size int) {
	was := viewBlockSize
	viewBlockSize = size
	t.Cleanup(func() { viewBlockSize = was })
}

// testView is a view of n records, cycles 1 to n (two records share each
// tenth cycle, every fourth is a quarantine record), on commits of their
// own, with one error.
func testView(n int) *view {
	v := &view{notes: gitstore.Hash{0xaa, 1}}
	for i := 1; i <= n; i++ {
		r := ledger.Record{ID: fmt.Sprintf("id-%05d", i), Cycle: i, Target: fmt.Sprintf("goal-%d", i%7),
			Result: ledger.Improved, Timestamp: "2026-01-01T00:00:00Z", SHA: strings.Repeat(fmt.Sprintf("%x", i%16), 40)}
		if i%10 == 0 {
			r.Cycle = i - 1
		}
		if i%4 == 0 {
			r.Result = ledger.Quarantined
		}
		if i%9 == 0 {
			r.Target = `a "quoted" goal` // not in the text as it is
		}
		text := r.Marshal()
		sum, ok := ledger.Summarize(text)
		if !ok {
			sum = ledger.SummaryOf(&r)
		}
		v.lines = append(v.lines, viewLine{Line: Line{Summary: sum, Text: text}, commit: gitstore.Hash{byte(i), byte(i >> 8), 7}})
	}
	v.errors = []*NoteError{{Commit: gitstore.Hash{3}, Line: 2, Text: "{not json", Err: fmt.Errorf("bad")}}
	v.sort()
	return v
}

// linesText is lines as text: each line's commit, cycle, summary and text.
func linesText(lines []viewLine) string {
	var b strings.Builder
	for _, ln := range lines {
		s := &ln.Summary
		fmt.Fprintf(&b, "%s %d %q %q %q %q %s\n", ln.commit, s.Cycle, s.ID, s.Target, s.Result, s.Timestamp, ln.Text)
	}
	return b.String()
}

// viewTable is the layout and the block table of a view file.
func viewTable(t testing.TB, data []byte) (viewLayout, []blockEntry) {
	t.Helper()
	foot := data[len(data)-viewFooter:]
	lay, ok := layout(data, foot, len(data))
	if !ok {
		t.Fatal("no view layout")
	}
	entries, ok := parseTable(data[len(viewMagic):viewHead], data[lay.table:len(data)-viewFooter], foot, lay)
	if !ok {
		t.Fatal("no block table")
	}
	return lay, entries
}

// withEntry is data with block i's row in the table changed by change, the
// footer's count of lines the sum of the rows' and the table's CRC made to
// hold again: a lie no CRC catches.
func withEntry(t testing.TB, data []byte, i int, change func(*blockEntry)) []byte {
	t.Helper()
	out := bytes.Clone(data)
	lay, entries := viewTable(t, out)
	change(&entries[i])
	tab := out[lay.table : len(out)-viewFooter]
	copy(tab[viewBlockEntry*i:], entries[i].put(nil))
	foot := out[len(out)-viewFooter:]
	n := 0
	for _, e := range entries {
		n += e.n
	}
	binary.BigEndian.PutUint32(foot[8:], uint32(n))
	binary.BigEndian.PutUint32(foot[20:], tableSum(out[len(viewMagic):viewHead], tab, foot, lay.qtable))
	return out
}

// craftView is a view file of the notes commit notes made of blocks of the
// bytes raws, the table's rows entries (their offsets set here), with no
// error and no quarantine line.
func craftView(notes gitstore.Hash, raws [][]byte, entries []blockEntry) []byte {
	out := append([]byte(viewMagic), notes[:]...)
	var table []byte
	n := 0
	for i, raw := range raws {
		entries[i].off = len(out)
		table = entries[i].put(table)
		out = append(out, raw...)
		n += entries[i].n
	}
	errStart := len(out)
	out = append(out, table...)
	var foot []byte
	for _, x := range [...]int{0, len(raws), n, errStart} {
		foot = binary.BigEndian.AppendUint32(foot, uint32(x))
	}
	foot = binary.BigEndian.AppendUint32(foot, crc32.Checksum(nil, castagnoli()))
	foot = binary.BigEndian.AppendUint32(foot, tableSum(notes[:], table, foot, errStart))
	return append(append(out, foot...), viewEnd...)
}

func saveView(t *testing.T, v *view) (path string, data []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "ledger.view")
	if err := v.save(path); err != nil {
		t.Fatal(err)
	}
	data, err := viewBytes(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

// The lines of a view saved in many blocks read back the same, whole and
// a few at a time: the last m, one cycle's (the tenth cycles have two
// records, some across two blocks), the quarantine records'; and a
// summary field the text does not hold as it is comes back too.
func TestViewBlocksRead(t *testing.T) {
	smallBlocks(t, 600)
	v := testView(120)
	path, data := saveView(t, v)
	if _, entries := viewTable(t, data); len(entries) < 20 {
		t.Fatalf("premise: %d blocks, want many", len(entries))
	}
	want := linesText(v.lines)
	got, err := readView(path)
	if err != nil {
		t.Fatal(err)
	}
	got.release()
	if g := linesText(got.lines); g != want {
		t.Fatalf("read back:\n%s\nwant:\n%s", g, want)
	}
	if fmt.Sprint(got.errors) != fmt.Sprint(v.errors) {
		t.Errorf("errors read back %v, want %v", got.errors, v.errors)
	}
	for _, m := range []int{0, 1, 2, 9, 10, 11, 50, 119, 120, 121} {
		tail, partial, err := readViewTail(path, v.notes, m)
		if err != nil || tail == nil {
			t.Fatalf("tail %d: %v", m, err)
		}
		k := min(m, len(v.lines))
		if g, w := linesText(tail.lines), linesText(v.lines[len(v.lines)-k:]); g != w || partial != (k < len(v.lines)) {
			t.Errorf("the last %d lines (partial %t):\n%s\nwant:\n%s", m, partial, g, w)
		}
	}
	for n := 0; n <= 121; n++ {
		c, err := readViewCycle(path, v.notes, n)
		if err != nil || c == nil {
			t.Fatalf("cycle %d: %v", n, err)
		}
		var w []viewLine
		for _, ln := range v.lines {
			if ln.Summary.Cycle == n {
				w = append(w, ln)
			}
		}
		if g, w := linesText(c.lines), linesText(w); g != w {
			t.Errorf("cycle %d:\n%s\nwant:\n%s", n, g, w)
		}
	}
	q, err := readViewQuarantined(path, v.notes)
	if err != nil || q == nil {
		t.Fatalf("quarantined: %v", err)
	}
	var wq []viewLine
	for _, ln := range v.lines {
		if string(ln.Summary.Result) == ledger.Quarantined {
			wq = append(wq, ln)
		}
	}
	if g, w := linesText(q.lines), linesText(wq); g != w || len(wq) < 20 {
		t.Errorf("quarantined:\n%s\nwant:\n%s", g, w)
	}
	if strings.Count(want, `"a \"quoted\" goal"`) < 10 {
		t.Errorf("premise: no target outside its text")
	}
}

// A view whose block is damaged, or whose table says of a block what it
// is not, is not read: not whole, not the lines of that block.
func TestViewBlocksDamaged(t *testing.T) {
	smallBlocks(t, 600)
	v := testView(120)
	path, data := saveView(t, v)
	_, entries := viewTable(t, data)
	const b = 5 // the block damaged
	e := entries[b]
	cycle := e.lo
	lie := func(change func(*blockEntry)) func() []byte {
		return func() []byte { return withEntry(t, data, b, change) }
	}
	cases := map[string]func() []byte{
		"a bit flipped in a block": func() []byte {
			out := bytes.Clone(data)
			out[e.off+e.size/2] ^= 4
			return out
		},
		"a block's bytes put in another's place": func() []byte {
			other := entries[b+1]
			out := withEntry(t, data, b, func(x *blockEntry) { x.sum = other.sum })
			return out
		},
		"inflating to one byte less than it does": lie(func(x *blockEntry) { x.inflated-- }),
		"inflating to one byte more than it does": lie(func(x *blockEntry) { x.inflated++ }),
		"inflating to more than a block may":      lie(func(x *blockEntry) { x.inflated = maxViewBlock + 1 }),
		"inflating to more than its bytes can":    lie(func(x *blockEntry) { x.inflated = deflateRatio*x.size + 1025 }),
		"a line more than it holds":               lie(func(x *blockEntry) { x.n++ }),
		// the last block inflates to one more line than it says: its
		// lines parse, but a record would be left out
		"its last line past the size it says": func() []byte {
			i := len(entries) - 1
			return withEntry(t, data, i, func(x *blockEntry) {
				x.inflated -= len(appendViewLine(nil, &v.lines[x.first+x.n-1]))
				x.n--
				x.hi = v.lines[x.first+x.n-1].Summary.Cycle
			})
		},
		"a cycle it does not begin with": lie(func(x *blockEntry) { x.lo-- }),
		"a cycle it does not end with":   lie(func(x *blockEntry) { x.hi++ }),
		"a block longer than it is":      lie(func(x *blockEntry) { x.size++ }),
		"the file cut short":             func() []byte { return data[:len(data)-1] },
		"the table's last byte changed": func() []byte {
			out := bytes.Clone(data)
			out[len(out)-viewFooter-1] ^= 1
			return out
		},
	}
	for name, make := range cases {
		bad := make()
		cycle := cycle
		if strings.HasPrefix(name, "its last line") {
			cycle = entries[len(entries)-1].lo
		}
		if err := writeView(path, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := readView(path); got != nil || err == nil {
			t.Errorf("%s: read as a view", name)
		}
		if tail, _, _ := readViewTail(path, v.notes, len(v.lines)); tail != nil {
			t.Errorf("%s: its lines read as the last ones", name)
		}
		if c, _ := readViewCycle(path, v.notes, cycle); c != nil {
			t.Errorf("%s: its lines read as cycle %d's", name, cycle)
		}
	}
}

// A block that inflates to far more than the table says is not inflated
// past what it says: reading it allocates what the table allows, not what
// the bytes would make.
func TestViewBlockBomb(t *testing.T) {
	raw := deflateBytes(make([]byte, 32<<20))
	notes := gitstore.Hash{9}
	path := filepath.Join(t.TempDir(), "ledger.view")
	for _, inflated := range []int{4096, maxViewBlock + 1} {
		e := blockEntry{size: len(raw), inflated: inflated, n: 1, lo: 1, hi: 1, sum: crc32.Checksum(raw, castagnoli())}
		if err := writeView(path, craftView(notes, [][]byte{raw}, []blockEntry{e}), 0o600); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		got, err := readView(path)
		tail, _, _ := readViewTail(path, notes, 1)
		runtime.ReadMemStats(&after)
		if got != nil || err == nil || tail != nil {
			t.Errorf("a block of %d bytes said to inflate to %d: read", len(raw), inflated)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
			t.Errorf("a block of %d bytes said to inflate to %d: %d bytes allocated", len(raw), inflated, n)
		}
	}
}

// A view brought forward by a record is saved without compressing again
// the blocks whose lines did not change: only the last ones; and one with
// a line changed in its middle, the blocks of that line and the last.
func TestViewSaveCopiesBlocks(t *testing.T) {
	smallBlocks(t, 600)
	path, data := saveView(t, testView(200))
	_, before := viewTable(t, data)
	saved := func(change func(v *view)) (packed int, got string, want string) {
		t.Helper()
		if err := writeView(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		v, err := readView(path)
		if err != nil {
			t.Fatal(err)
		}
		change(v)
		v.sort()
		n := viewBlocksPacked
		if err := v.save(path); err != nil {
			t.Fatal(err)
		}
		packed = viewBlocksPacked - n
		want = linesText(v.lines)
		v.release()
		back, err := readView(path)
		if err != nil {
			t.Fatal(err)
		}
		back.release()
		return packed, linesText(back.lines), want
	}
	more := testView(203)
	packed, got, want := saved(func(v *view) { v.lines = append(v.lines, more.lines[200:]...) })
	if got != want {
		t.Fatalf("after three records:\n%s\nwant:\n%s", got, want)
	}
	if packed > 2 {
		t.Errorf("after three records, %d of %d blocks compressed again, want the last two at most", packed, len(before))
	}
	packed, got, want = saved(func(v *view) {
		v.lines = append(v.lines[:100], v.lines[101:]...)
		v.lines = append(v.lines, more.lines[200])
	})
	if got != want {
		t.Fatalf("after a line removed:\n%s\nwant:\n%s", got, want)
	}
	if packed > 4 {
		t.Errorf("after a line removed and a record, %d of %d blocks compressed again", packed, len(before))
	}
}

// A view left by a version that wrote format 4 is read past, the answers
// are those with no view, and the view is written again in format 5.
func TestViewFormat4ReadPast(t *testing.T) {
	dir, commits := testRepo(t, 4)
	for _, c := range commits[:3] {
		record(t, openLedger(t, dir), c, 0)
	}
	want := fromScratch(t, dir)
	path := filepath.Join(dir, ".git", "evolve", "ledger.view")
	v, err := readView(path)
	if err != nil || v == nil {
		t.Fatalf("readView: %v", err)
	}
	v.release()
	if err := saveFormat4(v, path); err != nil {
		t.Fatal(err)
	}
	if got, err := readView(path); got != nil || err == nil {
		t.Fatal("a view of format 4 read as one of format 5")
	}
	if got := export(t, openLedger(t, dir)); got != want {
		t.Errorf("with a view of format 4:\n%s\nwant:\n%s", got, want)
	}
	data, err := viewBytes(path)
	if err != nil || !bytes.HasPrefix(data, []byte(viewMagic)) {
		t.Errorf("the view was not written again in format 5: %q", data[:min(len(data), len(viewMagic))])
	}
}

// saveFormat4 writes v as format 4 wrote it: each line (its commit, index,
// cycle, the lengths then the bytes of its text, id, target, result and
// timestamp, a CRC-32C), a zero commit, the errors, the quarantine
// lines' indexes, the lines' offsets and the footer.
func saveFormat4(v *view, path string) error {
	out := append([]byte("git-evolve ledger view 4\n"), v.notes[:]...)
	var offsets, quarantined []byte
	for i, ln := range v.lines {
		offsets = binary.BigEndian.AppendUint32(offsets, uint32(len(out)))
		if string(ln.Summary.Result) == ledger.Quarantined {
			quarantined = binary.BigEndian.AppendUint32(quarantined, uint32(i))
		}
		start := len(out)
		s := &ln.Summary
		out = append(out, ln.commit[:]...)
		for _, n := range [...]int{i, s.Cycle, len(ln.Text), len(s.ID), len(s.Target), len(s.Result), len(s.Timestamp)} {
			out = binary.BigEndian.AppendUint32(out, uint32(n))
		}
		for _, b := range [][]byte{ln.Text, s.ID, s.Target, s.Result, s.Timestamp} {
			out = append(out, b...)
		}
		out = binary.BigEndian.AppendUint32(out, crc32.Checksum(out[start:], castagnoli()))
	}
	out = append(out, make([]byte, 20)...)
	errStart := len(out)
	for _, e := range v.errors {
		start, msg := len(out), e.Err.Error()
		out = append(out, e.Commit[:]...)
		for _, n := range [...]int{e.Line, len(e.Text), len(msg)} {
			out = binary.BigEndian.AppendUint32(out, uint32(n))
		}
		out = append(append(out, e.Text...), msg...)
		out = binary.BigEndian.AppendUint32(out, crc32.Checksum(out[start:], castagnoli()))
	}
	out = append(append(out, quarantined...), offsets...)
	for _, n := range [...]int{len(quarantined) / 4, len(v.lines), errStart} {
		out = binary.BigEndian.AppendUint32(out, uint32(n))
	}
	return writeView(path, append(out, "VIEW-END"...), 0o600)
}

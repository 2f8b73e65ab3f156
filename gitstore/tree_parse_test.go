package gitstore

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"unsafe"
)

// plainParseTree is parseTree as first written, with strconv: what the
// faster one must read alike.
func plainParseTree(data []byte) ([]treeEntry, error) {
	var out []treeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("malformed tree entry")
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("malformed tree entry mode %q", data[:sp])
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 || len(data) < nul+21 {
			return nil, fmt.Errorf("malformed tree entry")
		}
		e := treeEntry{name: string(data[:nul]), mode: uint32(mode), dir: mode&0o170000 == 0o040000}
		copy(e.hash[:], data[nul+1:nul+21])
		out = append(out, e)
		data = data[nul+21:]
	}
	return out, nil
}

func treeBytes(entries ...string) []byte {
	var b []byte
	for i, e := range entries {
		b = append(b, e...)
		b = append(b, 0)
		b = append(b, bytes.Repeat([]byte{byte(i + 1)}, 20)...)
	}
	return b
}

func FuzzParseTree(f *testing.F) {
	f.Add(treeBytes("40000 00", "40000 ff", "40000 a7"))
	f.Add(treeBytes("100644 " + string(bytes.Repeat([]byte("ab"), 19))))
	f.Add(treeBytes("040000 0A", "100755 x", "160000 sub", "120000 link"))
	f.Add(treeBytes("37777777777 big", "40000000000 over", "9 nine", " empty"))
	f.Add([]byte("100644 short\x00abc"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gerr := parseTree(data)
		want, werr := plainParseTree(data)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("parseTree error %v, strconv's reading %v", gerr, werr)
		}
		if gerr != nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%d entries, want %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("entry %d: %+v, want %+v", i, got[i], want[i])
			}
		}
	})
}

// A fanout directory's name is one shared string, and equal to the bytes.
func TestParseTreeFanoutNames(t *testing.T) {
	entries, err := parseTree(treeBytes("40000 00", "40000 9f", "40000 Af", "40000 a", "100644 ff"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.name)
	}
	if fmt.Sprint(names) != "[00 9f Af a ff]" {
		t.Fatalf("names %v", names)
	}
	again, _ := parseTree(treeBytes("40000 9f"))
	if unsafe.StringData(entries[1].name) != unsafe.StringData(again[0].name) {
		t.Fatal("a fanout name was copied, not shared")
	}
}

// Each fanout name is its index in two lower-case hex digits.
func TestFanoutNames(t *testing.T) {
	for i, name := range fanoutNames {
		if want := fmt.Sprintf("%02x", i); name != want {
			t.Fatalf("fanoutNames[%d] = %q, want %q", i, name, want)
		}
	}
}

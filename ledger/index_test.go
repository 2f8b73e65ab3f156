package ledger

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestIndexKeys(t *testing.T) {
	for _, c := range []struct {
		note string
		want []string
	}{
		{`{"v":1,"cycle":7,"result":"improved"}` + "\n", []string{"0/0/7"}},
		{`{"v":1,"cycle":12345,"result":"quarantined"}` + "\n", []string{"1/123/12345", QuarantineKey}},
		// two records of one cycle, a quarantine of another, a line that
		// is no record: each key once, the line's last
		{`{"v":1,"cycle":3,"result":"harvested"}` + "\n" + `{"v":1,"cycle":3,"result":"quarantined"}` + "\n" +
			`{"v":1,"cycle":4,"result":"quarantined"}` + "\nnot a record\n",
			[]string{"0/0/3", QuarantineKey, "0/0/4", BadKey}},
		{"free text\n", []string{BadKey}},
		{"", nil},
	} {
		if got := IndexKeys([]byte(c.note)); !slices.Equal(got, c.want) {
			t.Errorf("IndexKeys(%q) = %q, want %q", c.note, got, c.want)
		}
	}
}

// FuzzIndexKeys: whatever a note holds, its keys are each given once, and
// each is a cycle's (CycleKey of a cycle of 0 or more), QuarantineKey or
// BadKey, BadKey last; QuarantineKey only when a record of the note is a
// quarantine record, as ParseLines reads them.
func FuzzIndexKeys(f *testing.F) {
	f.Add([]byte(`{"v":1,"cycle":3,"result":"quarantined"}` + "\nx\n"))
	f.Add([]byte(`{"v":1,"cycle":-2,"result":"improved"}`))
	f.Add([]byte(`{"cycle":1e3,"result":"quarantined","result":"improved"}`))
	f.Fuzz(func(t *testing.T, note []byte) {
		keys := IndexKeys(note)
		seen := map[string]bool{}
		for i, k := range keys {
			if seen[k] {
				t.Fatalf("%q given twice: %q", k, keys)
			}
			seen[k] = true
			switch {
			case k == BadKey:
				if i != len(keys)-1 {
					t.Fatalf("BadKey not last: %q", keys)
				}
			case k == QuarantineKey:
			default:
				n, err := strconv.Atoi(k[strings.LastIndexByte(k, '/')+1:])
				if err != nil || n < 0 || CycleKey(n) != k {
					t.Fatalf("%q is no key: %q", k, keys)
				}
			}
		}
		recs, bad := ParseLines(note)
		quarantine := false
		for _, r := range recs {
			quarantine = quarantine || r.Result == Quarantined
		}
		if seen[QuarantineKey] != quarantine {
			t.Fatalf("QuarantineKey %v for records %+v", seen[QuarantineKey], recs)
		}
		if seen[BadKey] != (len(bad) > 0) {
			t.Fatalf("BadKey %v with %d lines that are no record", seen[BadKey], len(bad))
		}
	})
}

package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseReflogLine(t *testing.T) {
	old, nw := strings.Repeat("a", 40), strings.Repeat("b", 40)
	e, ok := parseReflogLine([]byte(old + " " + nw + " Ann Author <ann@example.com> 1767323045 +0100\tnotes: Notes added by 'git notes append'"))
	if !ok || e.Old.String() != old || e.New.String() != nw || e.Who != "Ann Author <ann@example.com>" ||
		e.When.Unix() != 1767323045 || e.Message != "notes: Notes added by 'git notes append'" {
		t.Errorf("parsed %+v, %v", e, ok)
	}
	for _, bad := range []string{"", old, old + " " + nw, old + "x" + nw + " A <a> 1 +0000", strings.Repeat("g", 40) + " " + nw + " A <a> 1 +0000", old + " " + nw + " no email 1 +0000"} {
		if _, ok := parseReflogLine([]byte(bad)); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

func FuzzParseReflogLine(f *testing.F) {
	f.Add([]byte(strings.Repeat("0", 40) + " " + strings.Repeat("1", 40) + " A <a@b> 1 +0000\tmsg"))
	f.Add([]byte(strings.Repeat("0", 40) + " " + strings.Repeat("1", 40) + " <> x\t"))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, ok := parseReflogLine(line)
		if ok && (len(e.Who) == 0 || e.Who[len(e.Who)-1] != '>') {
			t.Errorf("%q parsed with who %q", line, e.Who)
		}
	})
}

// ReflogSince reads past the offset an earlier read returned, and the
// whole reflog again when the entry there is no longer the one it named.
func TestReflogSince(t *testing.T) {
	dir := t.TempDir()
	r := &Repo{commonDir: dir}
	path := filepath.Join(dir, "logs", "refs", "notes", "evolve")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	line := func(o, n byte) string {
		return strings.Repeat(string(o), 40) + " " + strings.Repeat(string(n), 40) + " A <a@x> 1 +0000\tm\n"
	}
	if es, end, err := r.ReflogSince("refs/notes/evolve", 0, ZeroHash); err != nil || len(es) != 0 || end != 0 {
		t.Fatalf("no reflog: %v %d %v", es, end, err)
	}
	os.WriteFile(path, []byte(line('0', '1')+line('1', '2')), 0o644)
	es, end, err := r.ReflogSince("refs/notes/evolve", 0, ZeroHash)
	if err != nil || len(es) != 2 || end != int64(2*len(line('0', '1'))) || es[1].End != end {
		t.Fatalf("read whole: %+v %d %v", es, end, err)
	}
	after := es[1].New
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(line('2', '3') + strings.Repeat("3", 40)) // and a line being written
	f.Close()
	es, next, err := r.ReflogSince("refs/notes/evolve", end, after)
	if err != nil || len(es) != 1 || es[0].New.String() != strings.Repeat("3", 40) || next != end+int64(len(line('2', '3'))) {
		t.Fatalf("read on: %+v %d %v", es, next, err)
	}
	// Expired and written anew: the entry at the offset is another.
	os.WriteFile(path, []byte(line('5', '6')+line('6', '7')), 0o644)
	if es, _, err := r.ReflogSince("refs/notes/evolve", end, after); err != nil || len(es) != 2 {
		t.Fatalf("rewritten: %+v %v", es, err)
	}
}

package gate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCountLines(t *testing.T) {
	for _, c := range []struct {
		old, new string
		ins, del int
		binary   bool
	}{
		{"", "a\nb\n", 2, 0, false},
		{"a\nb\n", "", 0, 2, false},
		{"a\nb\nc\n", "a\nB\nc\n", 1, 1, false},
		{"a\nb\nc\n", "a\nc\n", 0, 1, false},
		{"a\nb", "a\nb\nc", 2, 1, false}, // "b" without a newline became "b\n", and "c" came
		{"same\n", "same\n", 0, 0, false},
		{"text\n", "bin\x00ary", 0, 0, true},
	} {
		ins, del, bin := CountLines([]byte(c.old), []byte(c.new))
		if ins != c.ins || del != c.del || bin != c.binary {
			t.Errorf("CountLines(%q, %q) = +%d -%d binary %v; want +%d -%d binary %v", c.old, c.new, ins, del, bin, c.ins, c.del, c.binary)
		}
	}
}

// TestCountLinesAgreesWithGit compares the counts with git diff --numstat
// on edits of a longer file.
func TestCountLinesAgreesWithGit(t *testing.T) {
	var base []string
	for i := 0; i < 300; i++ {
		base = append(base, fmt.Sprintf("line %d of the file", i))
	}
	edits := map[string]func([]string) []string{
		"append":  func(l []string) []string { return append(l, "new 1", "new 2") },
		"prepend": func(l []string) []string { return append([]string{"first"}, l...) },
		"replace": func(l []string) []string {
			out := append([]string(nil), l...)
			for i := 10; i < 300; i += 37 {
				out[i] = "changed " + out[i]
			}
			return out
		},
		"cut": func(l []string) []string { return append(append([]string(nil), l[:50]...), l[120:]...) },
		"move": func(l []string) []string {
			return append(append(append([]string(nil), l[100:200]...), l[:100]...), l[200:]...)
		},
	}
	dir := t.TempDir()
	for name, edit := range edits {
		a := strings.Join(base, "\n") + "\n"
		b := strings.Join(edit(base), "\n") + "\n"
		pa, pb := filepath.Join(dir, name+".a"), filepath.Join(dir, name+".b")
		os.WriteFile(pa, []byte(a), 0o644)
		os.WriteFile(pb, []byte(b), 0o644)
		out, _ := exec.Command("git", "diff", "--no-index", "--numstat", pa, pb).Output()
		var gi, gd int
		fmt.Sscan(string(out), &gi, &gd)
		ins, del, _ := CountLines([]byte(a), []byte(b))
		if ins != gi || del != gd {
			t.Errorf("%s: +%d -%d, git diff --numstat says +%d -%d", name, ins, del, gi, gd)
		}
	}
}

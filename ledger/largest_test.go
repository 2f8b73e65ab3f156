package ledger

import (
	"fmt"
	"strings"
	"testing"
)

func TestLargestCycle(t *testing.T) {
	for _, c := range []struct {
		s  string
		n  int
		ok bool
	}{
		{"git evolve: record cycle 12 (improved)\n\nEvolve-Largest-Cycle: 40\n", 40, true},
		{"x\n\nEvolve-Largest-Cycle: 1", 1, true},
		{"x\n\nEvolve-Largest-Cycle: 3\nEvolve-Largest-Cycle: 5\n", 5, true},
		{"x\n\nEvolve-Largest-Cycle: 5\nEvolve-Largest-Cycle: x\n", 0, false},
		{"x\n\nEvolve-Largest-Cycle: 0\n", 0, false},
		{"x\n\nEvolve-Largest-Cycle: 012\n", 0, false},
		{"x\n\nEvolve-Largest-Cycle: +12\n", 0, false},
		{"x\n\nEvolve-Largest-Cycle: -12\n", 0, false},
		{"x\n\nEvolve-Largest-Cycle: \n", 0, false},
		{"x\n\nEvolve-Largest-Cycle: 1234567890\n", 0, false},
		{"x\n\nEvolve-Largest-Cycle:12\n", 0, false},
		{"x\n\nEvolve-Largest-Cycle: 12 \n", 0, false},
		{"x\r\n\r\nEvolve-Largest-Cycle: 12\r\n", 0, false},
		{"git evolve: record cycle 12 (improved)\n", 0, false},
		{"Notes added by 'git notes add'\n", 0, false},
	} {
		if n, ok := LargestCycle(c.s); n != c.n || ok != c.ok {
			t.Errorf("LargestCycle(%q) = %d, %v; want %d, %v", c.s, n, ok, c.n, c.ok)
		}
	}
}

// FuzzLargestCycle: a cycle read from a message is one the message names,
// on a line of its own.
func FuzzLargestCycle(f *testing.F) {
	f.Add("git evolve: record cycle 12 (improved)\n\nEvolve-Largest-Cycle: 40\n")
	f.Add("Evolve-Largest-Cycle: 9")
	f.Add("Evolve-Largest-Cycle: 9\nEvolve-Largest-Cycle: 09\n")
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := LargestCycle(s)
		if !ok {
			if n != 0 {
				t.Fatalf("LargestCycle(%q) = %d, false", s, n)
			}
			return
		}
		line := fmt.Sprintf("%s: %d", LargestTrailer, n)
		if n < 1 || n > 999999999 || !strings.HasPrefix(s, line) && !strings.Contains(s, "\n"+line) {
			t.Fatalf("LargestCycle(%q) = %d", s, n)
		}
	})
}

// MaxCycle is the largest of Cycles, read the same way.
func TestMaxCycle(t *testing.T) {
	for _, note := range []string{
		"",
		"a person wrote this\n",
		`{"v":1,"id":"a","cycle":3,"result":"improved"}` + "\n" + `{"cycle":12,"result":"improved"}` + "\n",
		`{"cycle":7}` + "\n" + `{"cycle":` + "\n" + `{"cycle":2,"target":"x"}`,
		`{"cycle":0,"result":"unchanged"}`,
	} {
		n, ok := MaxCycle([]byte(note))
		want, wantOK := 0, false
		for _, c := range Cycles([]byte(note)) {
			if !wantOK || c > want {
				want, wantOK = c, true
			}
		}
		if n != want || ok != wantOK {
			t.Errorf("MaxCycle(%q) = %d, %v; Cycles gives %d, %v", note, n, ok, want, wantOK)
		}
	}
}

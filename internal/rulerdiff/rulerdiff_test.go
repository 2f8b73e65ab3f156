package rulerdiff

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	ten := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	for _, tc := range []struct {
		name, a, b string
		want       string
	}{
		{"same", ten, ten, ""},
		{"empty", "", "", ""},
		{"added", "", "a\nb\n", "@@ -0,0 +1,2 @@\n+a\n+b"},
		{"removed", "a\n", "", "@@ -1 +0,0 @@\n-a"},
		{"one line changed, context around it", ten, strings.Replace(ten, "5\n", "five\n", 1),
			"@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8"},
		{"changes 6 apart share a hunk", ten, strings.Replace(strings.Replace(ten, "1\n", "one\n", 1), "8\n", "eight\n", 1),
			"@@ -1,10 +1,10 @@\n-1\n+one\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+eight\n 9\n 10"},
		{"changes 7 apart do not", "0\n" + ten, strings.Replace(strings.Replace("0\n"+ten, "0\n", "zero\n", 1), "8\n", "eight\n", 1),
			"@@ -1,4 +1,4 @@\n-0\n+zero\n 1\n 2\n 3\n@@ -6,6 +6,6 @@\n 5\n 6\n 7\n-8\n+eight\n 9\n 10"},
		{"the last line loses its newline", "a\nb\n", "a\nb",
			"@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file"},
		{"a last line without a newline as context", "a\nb\nc", "A\nb\nc",
			"@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n\\ No newline at end of file"},
		{"CRLF and tabs kept as they are", "\tx\r\n", "\ty\r\n", "@@ -1 +1 @@\n-\tx\r\n+\ty\r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, more := unifiedDiff(tc.a, tc.b, 1000)
			if got := strings.Join(lines, "\n"); got != tc.want || more != 0 {
				t.Errorf("unifiedDiff =\n%s\n(more %d), want\n%s", got, more, tc.want)
			}
			checkDiff(t, tc.a, tc.b, 1000)
		})
	}
	// The bound: the first lines, and how many more.
	var a, b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&a, "line %d\n", i)
		fmt.Fprintf(&b, "LINE %d\n", i)
	}
	lines, more := unifiedDiff(a.String(), b.String(), 10)
	if len(lines) != 10 || more != 1001-10 || lines[0] != "@@ -1,500 +1,500 @@" {
		t.Errorf("bounded to 10: %d lines, %d more, first %q", len(lines), more, lines[0])
	}
	if lines, more := unifiedDiff("a\n", "b\n", 0); len(lines) != 0 || more != 3 {
		t.Errorf("bounded to 0: %q, %d more", lines, more)
	}
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$`)

// checkDiff holds unifiedDiff to what a unified diff is: every line a hunk
// header, a context, removed or added line, or the missing-newline mark,
// none with a newline in it; each hunk's counts are its lines; and the
// hunks applied to a give b.
func checkDiff(t *testing.T, a, b string, max int) {
	t.Helper()
	lines, more := unifiedDiff(a, b, max)
	if len(lines) > max || more < 0 {
		t.Fatalf("unifiedDiff(max %d) = %d lines, %d more", max, len(lines), more)
	}
	for _, l := range lines {
		if l == "" || !strings.ContainsRune(" -+@\\", rune(l[0])) || strings.Contains(l, "\n") {
			t.Fatalf("unifiedDiff line %q", l)
		}
	}
	if more > 0 {
		return
	}
	if a == b && len(lines) > 0 {
		t.Fatalf("unifiedDiff of equal texts = %q", lines)
	}
	old := strings.SplitAfter(a, "\n")
	if old[len(old)-1] == "" {
		old = old[:len(old)-1]
	}
	var got strings.Builder
	at := 0 // the lines of a used
	for i := 0; i < len(lines); {
		m := hunkHeader.FindStringSubmatch(lines[i])
		if m == nil {
			t.Fatalf("line %d: %q where a hunk header should be", i, lines[i])
		}
		num := func(s string, def int) int {
			if s == "" {
				return def
			}
			n, _ := strconv.Atoi(s)
			return n
		}
		os, oc, nc := num(m[1], 0), num(m[2], 1), num(m[4], 1)
		first := os - 1 // the line of a where the hunk starts
		if oc == 0 {
			first = os
		}
		if first < at {
			t.Fatalf("hunk %q starts before the one above ends", lines[i])
		}
		for ; at < first; at++ {
			got.WriteString(old[at])
		}
		i++
		seenOld, seenNew := 0, 0
		for ; i < len(lines) && lines[i][0] != '@'; i++ {
			l := lines[i]
			eol := "\n"
			if i+1 < len(lines) && lines[i+1] == `\ No newline at end of file` {
				eol = ""
			}
			switch l[0] {
			case ' ', '-':
				if at >= len(old) || old[at] != l[1:]+eol {
					t.Fatalf("line %q of a is not line %d of a", l, at+1)
				}
				at++
				seenOld++
				if l[0] == ' ' {
					got.WriteString(l[1:] + eol)
					seenNew++
				}
			case '+':
				got.WriteString(l[1:] + eol)
				seenNew++
			case '\\':
				if l != `\ No newline at end of file` || i == 0 || lines[i-1][0] == '@' {
					t.Fatalf("line %q", l)
				}
			}
		}
		if seenOld != oc || seenNew != nc {
			t.Fatalf("hunk %q holds %d old and %d new lines", m[0], seenOld, seenNew)
		}
	}
	for ; at < len(old); at++ {
		got.WriteString(old[at])
	}
	if got.String() != b {
		t.Fatalf("the hunks applied to %q give %q, want %q", a, got.String(), b)
	}
}

func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n", 1000)
	f.Add("", "x", 3)
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "0\n2\n3\n4\n5\n6\n7\n8\n9", 1000)
	f.Add("\x00\xff\n\r\n", "\xff\x00\n", 1000)
	f.Add("a\na\na\n", "a\na\n", 2)
	f.Fuzz(func(t *testing.T, a, b string, max int) {
		if max < 0 || max > 1<<16 {
			max = 1000
		}
		checkDiff(t, a, b, max)
	})
}

func TestIsBinary(t *testing.T) {
	for _, tc := range []struct {
		data string
		want bool
	}{
		{"", false},
		{"text\n", false},
		{"é\tç\r\n", false},
		{"a\x00b", true},
		{"\xff\xfe", true},
		{strings.Repeat("a", binarySniff) + "\x00", false}, // past the sniff: and valid UTF-8
	} {
		if got := isBinary([]byte(tc.data)); got != tc.want {
			t.Errorf("isBinary(%.20q) = %v, want %v", tc.data, got, tc.want)
		}
	}
}

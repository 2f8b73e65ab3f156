package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/seeds.md, the parity table with the seeds, points only at
// testscripts that exist, gives each row a known status (none missing),
// says how each working row was checked and why each other row works
// differently, and ends with the count of its rows.
func TestSeedsDocument(t *testing.T) {
	doc, err := os.ReadFile("../../docs/seeds.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)

	named := regexp.MustCompile("testscripts/[A-Za-z0-9_./-]+")
	seen := map[string]bool{}
	for _, m := range named.FindAllString(text, -1) {
		m = strings.TrimRight(m, ".")
		if seen[m] {
			continue
		}
		seen[m] = true
		if !strings.HasSuffix(m, ".txtar") {
			t.Errorf("docs/seeds.md names %s, not a testscript (testscripts/<area>/<name>.txtar)", m)
			continue
		}
		if _, err := os.Stat(filepath.Join("../..", m)); err != nil {
			t.Errorf("docs/seeds.md names %s, which does not exist", m)
		}
	}
	if len(seen) == 0 {
		t.Fatal("docs/seeds.md names no testscript")
	}

	counts := map[string]int{}
	total := 0
	inTable := false
	for n, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		cells := splitRow(line)
		if !inTable {
			inTable = len(cells) == 5 && cells[3] == "status"
			continue
		}
		if strings.HasPrefix(cells[0], "---") {
			continue
		}
		if len(cells) != 5 {
			t.Errorf("docs/seeds.md:%d: %d cells, want 5 (section, behaviour, git-evolve, status, checked by)", n+1, len(cells))
			continue
		}
		status, checked := cells[3], cells[4]
		switch status {
		case "works":
			if !strings.Contains(checked, "testscripts/") && !strings.Contains(checked, "by hand") {
				t.Errorf("docs/seeds.md:%d: a working row names no testscript and was not checked by hand", n+1)
			}
		case "works differently":
			if checked == "" {
				t.Errorf("docs/seeds.md:%d: a row %s says neither why nor what", n+1, status)
			}
		case "missing":
			// Every behaviour of the seeds works, or works differently for
			// a reason the row gives, with what to do instead.
			t.Errorf("docs/seeds.md:%d: a behaviour is missing: make it work, or say why git-evolve does it differently and what the user runs instead", n+1)
		default:
			t.Errorf("docs/seeds.md:%d: status %q is not works, works differently or missing", n+1, status)
			continue
		}
		counts[status]++
		total++
	}
	want := fmt.Sprintf("Of %d behaviours, %d work, %d work differently and %d are missing.",
		total, counts["works"], counts["works differently"], counts["missing"])
	if !strings.Contains(text, want) {
		t.Errorf("docs/seeds.md does not end with its count: %q", want)
	}
}

// splitRow splits a Markdown table row into its trimmed cells; \| is a
// pipe inside a cell.
func splitRow(line string) []string {
	line = strings.ReplaceAll(line, `\|`, "\x00")
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	cells := strings.Split(line, "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(strings.ReplaceAll(c, "\x00", `\|`))
	}
	return cells
}

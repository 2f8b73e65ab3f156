package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"io"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/ledger"
)

func TestFitnessOf(t *testing.T) {
	for _, c := range []struct {
		in    string
		score float64
		ok    bool
		total int
	}{
		{`0.75`, 0.75, true, 0},
		{`"0.5"`, 0.5, true, 0},
		{`"9/10"`, 0.9, true, 10},
		{`{"score": 3}`, 3, true, 0},
		{`{"passing": 1, "total": 4}`, 0.25, true, 4},
		{`{"goals_passing": 2, "goals_total": 2}`, 1, true, 2},
		{`"5/4"`, 0, false, 0},
		{`"x"`, 0, false, 0},
		{`null`, 0, false, 0},
		{`[1]`, 0, false, 0},
		{`true`, 0, false, 0},
	} {
		f, ok := fitnessOf(json.RawMessage(c.in))
		if ok != c.ok || ok && math.Abs(f.score-c.score) > 1e-9 {
			t.Errorf("fitnessOf(%s) = %v, %v; want %v, %v", c.in, f.score, ok, c.score, c.ok)
		}
		if c.total > 0 && (f.total == nil || *f.total != c.total) {
			t.Errorf("fitnessOf(%s): total %v, want %d", c.in, f.total, c.total)
		}
	}
}

func TestInferResult(t *testing.T) {
	for _, c := range []struct{ line, result string }{
		{`{"cycle":1,"commit":"abc","fitness_before":1,"fitness_after":2}`, ledger.Improved},
		{`{"cycle":1,"commit":"abc","fitness_before":"3/4","fitness_after":"2/4"}`, ledger.Regressed},
		{`{"cycle":1,"commit":"abc"}`, ledger.Improved},
		{`{"cycle":1,"fitness_before":1,"fitness_after":2}`, ledger.Unchanged},
		{`{"cycle":1,"commit":"abc","type":"harvest"}`, ledger.Harvested},
		{`{"cycle":1,"commit":"abc","type":"quarantined"}`, ledger.Quarantined},
		{`{"cycle":1,"commit":"abc","type":"idle"}`, ledger.Unchanged},
	} {
		r, err := ledger.Parse([]byte(c.line))
		if err != nil {
			t.Fatal(err)
		}
		inferResult(&r)
		if r.Result != c.result {
			t.Errorf("%s: inferred %q, want %q", c.line, r.Result, c.result)
		}
		if string(r.Extra[Inferred]) == "" {
			t.Errorf("%s: not marked inferred", c.line)
		}
		if _, err := ledger.Parse(r.Marshal()); err != nil {
			t.Errorf("%s: the inferred record does not read back: %v", c.line, err)
		}
	}
}

// FuzzFitnessOf: any value reads as a finite fitness or none, and goal
// counts read are in order.
func FuzzFitnessOf(f *testing.F) {
	for _, s := range []string{`0.5`, `"1/2"`, `{"score":1}`, `{"passing":1,"total":2}`, `"1e400"`, `"-1/-2"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, ok := fitnessOf(data)
		if !ok {
			return
		}
		if math.IsNaN(v.score) || math.IsInf(v.score, 0) {
			t.Fatalf("fitnessOf(%q): score %v", data, v.score)
		}
		if (v.passing == nil) != (v.total == nil) || v.total != nil && (*v.passing < 0 || *v.passing > *v.total) {
			t.Fatalf("fitnessOf(%q): goal counts %v/%v", data, v.passing, v.total)
		}
	})
}

// importInto imports text into a new repository of n commits (the same
// commits every time) with the given batch size, and returns the ledger,
// its directory and the report.
func importInto(t *testing.T, text string, batch int) (*Ledger, string, *ImportReport) {
	t.Helper()
	dir, _ := testRepo(t, 6)
	l := openLedger(t, dir)
	defer func(b, bb int) { importBatch, importBatchBytes = b, bb }(importBatch, importBatchBytes)
	importBatch, importBatchBytes = batch, 1<<20
	rep, err := l.Import(strings.NewReader(text), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l, dir, rep
}

// An import read in batches stores what one batch stores: the same notes
// (one notes commit a batch), the same journal, the same report, the same
// line numbers; and a line over the bound is skipped and named.
func TestImportInBatches(t *testing.T) {
	testenv.Slow(t)
	_, commits := testRepo(t, 6)
	defer func(m int) { importLineMax = m }(importLineMax)
	importLineMax = 400
	rec := func(cycle int, commit, result string) string {
		return fmt.Sprintf(`{"cycle":%d,"target":"t","result":%q,"sha":%q,"goals_passing":1,"goals_total":2}`, cycle, result, commit)
	}
	lines := []string{
		rec(1, commits[0], "improved"),
		"",
		rec(2, commits[1], "harvested"),
		"not json",
		rec(3, commits[0], "improved"), // a second record on commit 0, in another batch
		rec(0, commits[2], "improved"),
		rec(4, "", "unchanged"), // the journal
		rec(5, strings.Repeat("f", 40), "improved"), // anchored
		`{"cycle":6,"target":"` + strings.Repeat("x", 500) + `","result":"improved"}`,
		rec(2, commits[1], "harvested"), // the same record again
		rec(3, commits[3], "improved"),  // cycle 3 again, on another commit
		rec(7, commits[4], "regressed") + "\r",
		rec(8, "", "idle"),
		rec(9, commits[5], "quarantined"),
	}
	text := strings.Join(lines, "\n")
	one, dirOne, repOne := importInto(t, text, 10000)
	for _, batch := range []int{1, 2, 3} {
		l, dir, rep := importInto(t, text, batch)
		if got, want := fmt.Sprintf("%+v", *rep), fmt.Sprintf("%+v", *repOne); got != want {
			t.Errorf("batches of %d: report\n%s\nwant\n%s", batch, got, want)
		}
		if got, want := export(t, l), export(t, one); got != want {
			t.Errorf("batches of %d: ledger\n%s\nwant\n%s", batch, got, want)
		}
		tree := func(dir string) string { return git(t, dir, "rev-parse", "refs/notes/evolve^{tree}") }
		if tree(dir) != tree(dirOne) {
			t.Errorf("batches of %d: notes tree %s, want %s", batch, tree(dir), tree(dirOne))
		}
		journal := func(l *Ledger) string {
			rs, _, err := l.journal.Read()
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, r := range rs {
				b.Write(r.Marshal())
				b.WriteByte('\n')
			}
			return b.String()
		}
		if got, want := journal(l), journal(one); got != want || strings.Count(want, "\n") != 2 {
			t.Errorf("batches of %d: journal\n%s\nwant the 2 records of\n%s", batch, got, want)
		}
		if n := strings.Count(git(t, dir, "log", "--format=%s", "refs/notes/evolve"), "\n"); batch == 1 && n < 6 {
			t.Errorf("batches of 1: %d notes commits, want one for each line with a record for the notes", n)
		}
	}
	want := "{Stored:7 Anchored:1 Inferred:0 Journaled:2 JournaledAs:map[idle:1 unchanged:1] Present:1 Lines:14 Blank:1 Anchor:"
	if got := fmt.Sprintf("%+v", *repOne); !strings.HasPrefix(got, want) {
		t.Errorf("report %s, want it to begin %s", got, want)
	}
	// Every line is accounted for.
	if r := repOne; r.Stored+r.Journaled+r.Present+len(r.Skipped)+r.Blank != r.Lines {
		t.Errorf("%d stored, %d journaled, %d present, %d skipped and %d blank of %d lines", r.Stored, r.Journaled, r.Present, len(r.Skipped), r.Blank, r.Lines)
	}
	skipped := fmt.Sprint(repOne.Skipped)
	for _, line := range []string{"4 ", "6 cycle 0", "9 the line is longer than"} {
		if !strings.Contains(skipped, "{"+line) {
			t.Errorf("skipped %s: line %s missing", skipped, line)
		}
	}
	if w := fmt.Sprint(repOne.Warnings); !strings.Contains(w, "{11 cycle 3 is also recorded on commit "+commits[0][:7]) {
		t.Errorf("warnings %s: want line 11's cycle 3, also on %s", w, commits[0][:7])
	}
}

// errAfter reads text, then fails.
type errAfter struct{ r io.Reader }

func (e *errAfter) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		return n, errors.New("disk gone")
	}
	return n, err
}

// A file that cannot be read to its end: what was read is stored, the
// error names the line, and importing again adds only the rest.
func TestImportReadError(t *testing.T) {
	dir, commits := testRepo(t, 3)
	l := openLedger(t, dir)
	first := fmt.Sprintf(`{"cycle":1,"target":"t","result":"improved","sha":%q}`+"\n", commits[0])
	second := fmt.Sprintf(`{"cycle":2,"target":"t","result":"improved","sha":%q}`+"\n", commits[1])
	rep, err := l.Import(&errAfter{strings.NewReader(first)}, ImportOptions{})
	var re *ImportReadError
	if !errors.As(err, &re) || re.Line != 2 || !strings.Contains(err.Error(), "disk gone") {
		t.Fatalf("error %v, want a read error at line 2", err)
	}
	if rep == nil || rep.Stored != 1 {
		t.Fatalf("report with the read error: %+v, want the line read stored", rep)
	}
	if got := export(t, l); strings.Count(got, "\n") != 1 || !strings.Contains(got, `"cycle":1`) {
		t.Fatalf("after the error the ledger holds\n%s\nwant the first line's record", got)
	}
	rep, err = l.Import(strings.NewReader(first+second), ImportOptions{})
	if err != nil || rep.Stored != 1 || rep.Present != 1 {
		t.Fatalf("import again: %+v, %v; want 1 stored, 1 present", rep, err)
	}
}

// An import whose batch writes more objects than a pack's least is written
// as a pack git accepts, no longer kept from a repack once the notes ref
// names it, and reads back whole.
func TestImportWritesAPack(t *testing.T) {
	dir, _ := testRepo(t, 1)
	var stream strings.Builder
	const n = 80
	for i := 1; i <= n; i++ {
		msg := fmt.Sprintf("c%d", i)
		fmt.Fprintf(&stream, "commit refs/heads/main\nmark :%d\ncommitter C <c@example.com> %d +0000\ndata %d\n%s\n", i, 1700000000+i, len(msg), msg)
		if i > 1 {
			fmt.Fprintf(&stream, "from :%d\n", i-1)
		}
		stream.WriteString("\n")
	}
	cmd := exec.Command("git", "fast-import", "--quiet", "--force")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(stream.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, out)
	}
	git(t, dir, "repack", "-adq") // the commits in one pack: a new one is the import's
	commits := strings.Fields(git(t, dir, "rev-list", "--reverse", "main"))
	var text strings.Builder
	for i, c := range commits {
		fmt.Fprintf(&text, `{"cycle":%d,"target":"t","result":"improved","sha":%q}`+"\n", i+1, c)
	}
	l := openLedger(t, dir)
	rep, err := l.Import(strings.NewReader(text.String()), ImportOptions{})
	if err != nil || rep.Stored != len(commits) {
		t.Fatalf("import: %+v, %v; want %d stored", rep, err, len(commits))
	}
	if out := git(t, dir, "count-objects", "-v"); !strings.Contains(out, "packs: 2\n") {
		t.Errorf("after the import:\n%s\nwant the import's pack beside the commits'", out)
	}
	if keeps, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.keep")); len(keeps) != 0 {
		t.Errorf("packs still kept after the import: %v", keeps)
	}
	git(t, dir, "fsck", "--strict", "--no-dangling")
	if got := strings.Count(export(t, l), "\n"); got != len(commits) {
		t.Errorf("the ledger holds %d lines, want %d", got, len(commits))
	}
	if got := strings.Count(git(t, dir, "notes", "--ref=evolve", "list"), "\n"); got != len(commits) {
		t.Errorf("git notes list gives %d notes, want %d", got, len(commits))
	}
}

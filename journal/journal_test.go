package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/ledger"
)

func TestMissingJournalIsEmpty(t *testing.T) {
	j := At(filepath.Join(t.TempDir(), "evolve"))
	recs, bad, err := j.Read()
	if err != nil || len(recs) != 0 || len(bad) != 0 {
		t.Fatalf("Read of a missing journal = %v, %v, %v; want nothing", recs, bad, err)
	}
	if err := j.Append(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(j.Path()); !os.IsNotExist(err) {
		t.Fatalf("an empty Append created the journal (stat: %v)", err)
	}
}

func TestAppendRoundTrips(t *testing.T) {
	j := At(filepath.Join(t.TempDir(), "evolve"))
	if err := j.Append(ledger.Record{V: 1, ID: "a1", Cycle: 1, Target: "t", Result: ledger.Unchanged}); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(ledger.Record{V: 1, ID: "a2", Cycle: 2, Target: "t", Result: ledger.Unchanged},
		ledger.Record{V: 1, ID: "a3", Cycle: 3, Target: "u", Result: ledger.Unchanged}); err != nil {
		t.Fatal(err)
	}
	recs, bad, err := j.Read()
	if err != nil || len(bad) != 0 {
		t.Fatalf("Read: %v, bad lines %v", err, bad)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.ID+":"+r.Result)
	}
	if want := "a1:unchanged a2:unchanged a3:unchanged"; strings.Join(got, " ") != want {
		t.Fatalf("records = %q, want %q", strings.Join(got, " "), want)
	}
	data, _ := j.Bytes()
	if n := strings.Count(string(data), "\n"); n != 3 {
		t.Fatalf("journal has %d lines, want 3:\n%s", n, data)
	}
}

// A last line left without its newline (a crash, an editor) stays a line of
// its own: the next record neither joins it nor is lost, and a line that does
// not parse is reported and kept.
func TestAppendAfterTornLine(t *testing.T) {
	j := At(t.TempDir())
	torn := `{"cycle":1,"id":"x1","target":"t","result":"unchanged"}` + "\nnot json"
	if err := os.WriteFile(j.Path(), []byte(torn), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(ledger.Record{V: 1, ID: "x2", Cycle: 2, Target: "t", Result: ledger.Unchanged}); err != nil {
		t.Fatal(err)
	}
	recs, bad, err := j.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].ID != "x1" || recs[1].ID != "x2" {
		t.Fatalf("records = %+v, want x1 and x2", recs)
	}
	if len(bad) != 1 {
		t.Fatalf("bad lines = %v, want the one that is not JSON", bad)
	}
	data, _ := j.Bytes()
	if !strings.HasPrefix(string(data), torn+"\n") {
		t.Fatalf("the torn line was not kept as it was:\n%s", data)
	}
}

package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

// Canonical forms of the seeds, written out from the data model.
const (
	canon1 = `{"v":1,"cycle":1,"target":"test-pass-rate","result":"improved","sha":"abc1234","canonical_sha":"abc1234","timestamp":"2026-02-11T21:00:00Z","goals_passing":18,"goals_total":23}`
	canon2 = `{"v":1,"cycle":2,"target":"doc-coverage","result":"regressed","sha":"def5678","canonical_sha":"def5678","log_sha":"fedcba9","timestamp":"2026-02-11T21:30:00Z","goals_passing":17,"goals_total":23}`
	canon3 = `{"v":1,"cycle":3,"target":"idle","result":"unchanged","timestamp":"2026-02-11T22:00:00Z"}`
)

func TestParseLines(t *testing.T) {
	data := strings.Join([]string{
		seed1,              // 1
		"",                 // 2
		"   \t",            // 3
		"not json",         // 4
		seed3 + "\r",       // 5 (CRLF)
		`{"cycle":"3"}`,    // 6
		"  " + seed2 + " ", // 7
		`[1,2]`,            // 8
		"",                 // 9 (trailing newline)
	}, "\n")
	recs, bad := ParseLines([]byte(data))
	var cycles []int
	for _, r := range recs {
		cycles = append(cycles, r.Cycle)
	}
	if fmt.Sprint(cycles) != "[1 3 2]" {
		t.Errorf("ParseLines cycles = %v, want [1 3 2] (the good lines, in order)", cycles)
	}
	if len(recs) == 3 && string(recs[2].Marshal()) != canon2 {
		t.Errorf("record from line 7 = %s, want %s", recs[2].Marshal(), canon2)
	}
	want := []struct {
		line        int
		text, field string
	}{
		{4, "not json", ""},
		{6, `{"cycle":"3"}`, "cycle"},
		{8, `[1,2]`, ""},
	}
	if len(bad) != len(want) {
		t.Fatalf("ParseLines reported %d bad lines, want %d: %v", len(bad), len(want), bad)
	}
	for i, w := range want {
		le := bad[i]
		if le.Line != w.line || le.Text != w.text {
			t.Errorf("bad[%d] = line %d %q, want line %d %q", i, le.Line, le.Text, w.line, w.text)
		}
		wantFieldError(t, fmt.Sprintf("line %d", w.line), le, w.field)
		if !errors.Is(le, le.Err) || errors.Unwrap(le) != le.Err {
			t.Errorf("LineError does not unwrap to its cause")
		}
		if !strings.Contains(le.Error(), fmt.Sprintf("line %d", w.line)) || !strings.Contains(le.Error(), le.Err.Error()) {
			t.Errorf("LineError.Error() = %q, want the line number and the cause", le.Error())
		}
	}
}

func TestParseLinesEmpty(t *testing.T) {
	for _, data := range []string{"", "\n", "\n\n  \n\t\r\n", " "} {
		recs, bad := ParseLines([]byte(data))
		if len(recs) != 0 || len(bad) != 0 {
			t.Errorf("ParseLines(%q) = %d records, %d bad; want none", data, len(recs), len(bad))
		}
	}
	// A last line without a newline is read.
	recs, bad := ParseLines([]byte(seed1 + "\n" + seed3))
	if len(recs) != 2 || len(bad) != 0 || recs[1].Cycle != 3 {
		t.Errorf("ParseLines without a final newline = %d records, %v", len(recs), bad)
	}
}

func TestFormatNote(t *testing.T) {
	recs := []Record{mustParse(t, seed3), mustParse(t, seed1), mustParse(t, seed2),
		// the same record as seed1, written differently
		mustParse(t, `{"goals_total":23,"goals_passing":18,"timestamp":"2026-02-11T21:00:00Z","canonical_sha":"abc1234","sha":"abc1234","result":"improved","target":"test-pass-rate","cycle":1}`)}
	unknown := []string{"zzz", "not json", "not json", `{"cycle":"3"}`}
	got := string(FormatNote(recs, unknown))
	// Byte order: "n" < "z" < "{"; `{"c` < `{"v`; `"cycle":1` < `"cycle":2` …
	want := "not json\n" + "zzz\n" + `{"cycle":"3"}` + "\n" + canon1 + "\n" + canon2 + "\n" + canon3 + "\n"
	if got != want {
		t.Errorf("FormatNote =\n%s\nwant\n%s", got, want)
	}
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if !strings.HasSuffix(got, "\n") || !sort.StringsAreSorted(lines) {
		t.Errorf("FormatNote is not sorted, newline-terminated lines: %q", got)
	}
	for i := 1; i < len(lines); i++ {
		if lines[i] == lines[i-1] {
			t.Errorf("FormatNote repeats line %q", lines[i])
		}
	}
	if out := FormatNote(nil, nil); len(out) != 0 {
		t.Errorf("FormatNote(nil, nil) = %q, want empty", out)
	}
	if got, want := string(FormatNote([]Record{mustParse(t, seed3)}, nil)), canon3+"\n"; got != want {
		t.Errorf("FormatNote(one) = %q, want %q", got, want)
	}
}

// unknownTexts returns the verbatim texts of bad lines.
func unknownTexts(bad []*LineError) []string {
	var s []string
	for _, le := range bad {
		s = append(s, le.Text)
	}
	return s
}

// reformat reads a note and writes it again.
func reformat(note []byte) []byte {
	recs, bad := ParseLines(note)
	return FormatNote(recs, unknownTexts(bad))
}

func TestFormatNoteIdempotent(t *testing.T) {
	var recs []Record
	for _, l := range validLines {
		recs = append(recs, mustParse(t, l))
	}
	unknown := []string{"not json", `{"cycle":-1}`, `{"v":2,"cycle":1,"new":"thing"}`, "x y"}
	note := FormatNote(recs, unknown)
	if again := reformat(note); !bytes.Equal(again, note) {
		t.Errorf("FormatNote is not idempotent:\n first\n%s\n second\n%s", note, again)
	}
	// A note in another writer's form becomes canonical in one step.
	raw := []byte(strings.Join([]string{seed2, seed1, "", "garbage", seed1, lineLegacy, lineSecondWriter}, "\n"))
	once := reformat(raw)
	if twice := reformat(once); !bytes.Equal(once, twice) {
		t.Errorf("reformatting is not idempotent:\n once\n%s\n twice\n%s", once, twice)
	}
	for _, s := range []string{canon1, canon2, "garbage", `{"v":1,"cycle":5,"target":"x","sha":"abc","commit_sha":"abc","goal_id":"x"}`} {
		if !bytes.Contains(once, []byte(s+"\n")) {
			t.Errorf("reformatted note lacks %s:\n%s", s, once)
		}
	}
	if n := bytes.Count(once, []byte(canon1)); n != 1 {
		t.Errorf("reformatted note has seed 1 %d times", n)
	}
}

// catSortUniq is what `git notes merge -s cat_sort_uniq` does to two notes:
// concatenate, split into lines, drop empty lines, sort bytewise, drop
// duplicates, write each line with a newline.
func catSortUniq(notes ...[]byte) []byte {
	var lines []string
	for _, n := range notes {
		for _, l := range strings.Split(string(n), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
	}
	sort.Strings(lines)
	var b bytes.Buffer
	for i, l := range lines {
		if i > 0 && l == lines[i-1] {
			continue
		}
		b.WriteString(l + "\n")
	}
	return b.Bytes()
}

func TestFormatNoteCatSortUniq(t *testing.T) {
	a := []Record{mustParse(t, seed1), mustParse(t, seed3), mustParse(t, lineFullTrace)}
	b := []Record{mustParse(t, seed3), mustParse(t, seed2), mustParse(t, lineHTML), mustParse(t, seed1)}
	ua := []string{"garbage", "~tilde"}
	ub := []string{"garbage", "!bang"}
	na, nb := FormatNote(a, ua), FormatNote(b, ub)
	merged := catSortUniq(na, nb)
	union := FormatNote(append(append([]Record{}, a...), b...), append(append([]string{}, ua...), ub...))
	if !bytes.Equal(merged, union) {
		t.Errorf("cat_sort_uniq(A, B) =\n%s\nFormatNote(A ∪ B) =\n%s", merged, union)
	}
	if got := catSortUniq(nb, na); !bytes.Equal(got, merged) {
		t.Error("cat_sort_uniq is not symmetric here")
	}
	// A formatted note is a fixed point of merging with itself or with
	// nothing.
	for _, n := range [][]byte{na, nb, union} {
		if got := catSortUniq(n, n); !bytes.Equal(got, n) {
			t.Errorf("cat_sort_uniq(N, N) =\n%s\nwant N =\n%s", got, n)
		}
		if got := catSortUniq(n, nil); !bytes.Equal(got, n) {
			t.Errorf("cat_sort_uniq(N, empty) changes N")
		}
	}
	// The check must be able to fail: an unsorted note is not a fixed point.
	if bytes.Equal(catSortUniq([]byte("b\na\n")), []byte("b\na\n")) {
		t.Error("catSortUniq does not sort")
	}
}

func TestCheckWritable(t *testing.T) {
	older, err := semver.StrictNewVersion("0.9.0")
	version := semver.MustParse(Version.String())
	if err != nil || !older.LessThan(version) {
		t.Fatalf("test assumes Version (%s) is above 0.9.0", Version)
	}
	marker := func(schema string) []byte { return []byte(fmt.Sprintf(`{"schema":%q}`, schema)) }
	next := version.IncPatch()
	tests := []struct {
		name    string
		marker  []byte
		refused bool
		mention string // text the error must contain
	}{
		{"no marker", nil, false, ""},
		{"own marker", MarkerBytes(), false, ""},
		{"same version", marker(Version.String()), false, ""},
		{"same version, other fields", []byte(`{"schema":"` + Version.String() + `","writer":"x"}`), false, ""},
		{"same version with build metadata", marker(Version.String() + "+build.7"), false, ""},
		{"older", marker(older.String()), false, ""},
		{"pre-release of this version", marker(Version.String() + "-rc.1"), false, ""},
		{"newer patch", marker(next.String()), true, "upgrade"},
		{"newer minor", marker(version.IncMinor().String()), true, "upgrade"},
		{"newer major", marker(version.IncMajor().String()), true, "upgrade"},
		{"pre-release of the next minor", marker(version.IncMinor().String() + "-rc.1"), true, "upgrade"},
		{"garbage", []byte("not json"), true, MarkerName},
		{"empty file", []byte{}, true, MarkerName},
		{"JSON array", []byte(`["1.0.0"]`), true, MarkerName},
		{"schema a number", []byte(`{"schema":1}`), true, MarkerName},
		{"no schema", []byte(`{}`), true, "version"},
		{"empty schema", marker(""), true, "version"},
		{"not semver", marker("latest"), true, "latest"},
		{"two parts", marker("1.0"), true, "1.0"},
		{"v prefix", marker("v" + Version.String()), true, "v" + Version.String()},
	}
	for _, tt := range tests {
		err := CheckWritable(tt.marker)
		if !tt.refused {
			if err != nil {
				t.Errorf("%s: CheckWritable(%s) = %v, want nil", tt.name, tt.marker, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: CheckWritable(%s) = nil, want it refused", tt.name, tt.marker)
			continue
		}
		if !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("%s: CheckWritable(%s) = %q, want it to mention %q", tt.name, tt.marker, err, tt.mention)
		}
	}
	// The newer-version message names both versions.
	newer := version.IncMajor().String()
	if err := CheckWritable(marker(newer)); err == nil || !strings.Contains(err.Error(), newer) || !strings.Contains(err.Error(), Version.String()) {
		t.Errorf("CheckWritable(%s) = %v, want it to name %s and %s", newer, err, newer, Version)
	}
}

func TestMarkerBytes(t *testing.T) {
	b := MarkerBytes()
	if !bytes.HasSuffix(b, []byte("\n")) || bytes.Count(b, []byte("\n")) != 1 {
		t.Errorf("MarkerBytes = %q, want one newline-terminated line", b)
	}
	var m Marker
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("MarkerBytes %q does not parse: %v", b, err)
	}
	v, err := semver.StrictNewVersion(m.Schema)
	if err != nil || !v.Equal(semver.MustParse(Version.String())) {
		t.Errorf("MarkerBytes schema = %q, want %s", m.Schema, Version)
	}
	if err := CheckWritable(b); err != nil {
		t.Errorf("CheckWritable(MarkerBytes()) = %v", err)
	}
	if MarkerName != "evolve-ledger.json" {
		t.Errorf("MarkerName = %q, want the data model's evolve-ledger.json", MarkerName)
	}
}

package audit

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
)

func sampleState() *verifyState {
	return &verifyState{
		Binary: `"/bin/git-evolve" 123 456`,
		Source: commit(7),
		Packs:  "packs",
		Sums: &ledgerSums{
			Sums: []recSum{
				{Commit: commit(1), ID: "a", Digest: "d1", Cycle: 1, V: 1, Result: "improved", Timestamp: "2026-01-02T03:04:05Z",
					Chained: true, By: "Ann <a@x>", Host: "box", CommitDigest: "sha256:00"},
				{Commit: commit(2), Digest: "d2", Cycle: -3, Result: "improved", Prev: "a:d1", Absent: true, NotCommit: true},
			},
			Lines: []Finding{{Severity: Breach, Kind: "unreadable", Message: "m", Commit: commit(3).String()}},
			Notes: 2,
		},
		Head:     commit(9),
		History:  "h",
		Trailers: []trailerSum{{Hash: commit(4), ID: "a", Cycle: "1", Result: "improved", Record: "sha256:00"}},
	}
}

func encoded(st *verifyState) []byte {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	encodeState(w, st)
	w.Flush()
	return buf.Bytes()
}

func TestStateRoundTrip(t *testing.T) {
	st := sampleState()
	got, err := decodeState(encoded(st))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, st) {
		t.Errorf("decodeState(encodeState(st)) = %+v, want %+v", got, st)
	}
	empty := &verifyState{Sums: &ledgerSums{}}
	if got, err := decodeState(encoded(empty)); err != nil || got.Source != gitstore.ZeroHash || len(got.Sums.Sums) != 0 {
		t.Errorf("an empty state: %+v, %v", got, err)
	}
}

func TestStateDamaged(t *testing.T) {
	data := encoded(sampleState())
	for n := 0; n < len(data); n++ {
		if _, err := decodeState(data[:n]); err == nil {
			t.Fatalf("a state cut at byte %d of %d decodes", n, len(data))
		}
	}
	if _, err := decodeState(append(append([]byte{}, data...), 0)); err == nil {
		t.Error("a state with a byte more decodes")
	}
	other := bytes.Replace(data, []byte{'\n', verifyStateFormat}, []byte{'\n', verifyStateFormat + 1}, 1)
	if _, err := decodeState(other); err == nil {
		t.Error("a state of another format decodes")
	}
}

func FuzzDecodeState(f *testing.F) {
	f.Add(encoded(sampleState()))
	f.Add(encoded(&verifyState{Sums: &ledgerSums{}}))
	f.Add([]byte(verifyStateMagic + "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeState(data)
		if err != nil {
			return
		}
		// What decodes is written back as it was read.
		again, err := decodeState(encoded(st))
		if err != nil || !reflect.DeepEqual(again, st) {
			t.Errorf("decoded, encoded and decoded again: %+v, %v; want %+v", again, err, st)
		}
	})
}

// Pauses of the collector that overlap, ended in any order, put back the
// setting found before the first.
func TestPauseGCNests(t *testing.T) {
	was := debug.SetGCPercent(137)
	defer debug.SetGCPercent(was)
	a := pauseGC()
	b := pauseGC()
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("paused: the setting is %d, want -1", got)
	}
	a()
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("one pause still on: the setting is %d, want -1", got)
	}
	b()
	if got := debug.SetGCPercent(137); got != 137 {
		t.Errorf("after both: the setting is %d, want 137", got)
	}
}

// What changes the history git log walks includes the replace refs under
// GIT_REPLACE_REF_BASE when it is set, not only under refs/replace/.
func TestHistoryKeyReplaceBase(t *testing.T) {
	dir := t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@x",
		"GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@x", "GIT_REPLACE_REF_BASE=refs/alt-replace/")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "one")
	git("commit", "-q", "--allow-empty", "-m", "two")
	t.Setenv("GIT_REPLACE_REF_BASE", "refs/alt-replace/")
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	before, ok := historyKey(repo)
	if !ok {
		t.Fatal("historyKey could not be read")
	}
	git("replace", "--graft", "HEAD")
	if after, ok := historyKey(repo); !ok || after == before {
		t.Errorf("a replace ref under GIT_REPLACE_REF_BASE left the key as it was (%v)", ok)
	}
}

// A kept file written anew removes the temporary copies of it that a
// killed verify left, and no other file.
func TestReplaceFileRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-48 * time.Hour)
	for _, name := range []string{"verify-state.123", "verify-stately.1", "verified.7"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	if err := replaceFile(filepath.Join(dir, "verify-state"), func(w *bufio.Writer) { w.WriteString("state") }); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"verify-state": true, "verify-state.123": false, "verify-stately.1": true, "verified.7": true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s: there %v, want %v", name, err == nil, want)
		}
	}
}

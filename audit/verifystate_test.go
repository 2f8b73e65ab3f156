package audit

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
)

// Fields of the shapes the ledger's writers give them, kept in binary,
// and of others, kept as they are.
const (
	hexID     = "0123456789abcdef0a1b"
	hexDigest = "00112233445566778899aabbccddeeff"
	hexCommit = "sha256:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
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
				{Commit: commit(5), ID: hexID, Digest: hexDigest, Cycle: 4, V: 1, Result: "harvested", Timestamp: "2026-01-02T03:04:05Z",
					Chained: true, By: "Ann <a@x>", Host: "box", CommitDigest: hexCommit, Prev: ":d2"},
				{Commit: commit(6), ID: "fedcba9876543210fedc", Digest: strings.ToUpper(hexDigest), Cycle: 5, V: 2, Result: "new-result",
					Timestamp: "t", Prev: hexID + ":" + hexDigest, By: "Bob", Host: "box", CommitDigest: "sha256:" + hexDigest},
				{Commit: commit(10), ID: "b", Digest: hexDigest, Cycle: 6, Result: "improved", CommitDigest: strings.Repeat("\xfe", 32), CommitBin: true},
				{Commit: commit(8), ID: noID + hexDigest, Digest: hexDigest + "0", Cycle: 6, Result: "",
					Prev: hexID + ":" + hexDigest[1:], By: "Ann <a@x>", Host: "", CommitDigest: strings.TrimPrefix(hexCommit, "sha256:")},
			},
			Lines: []Finding{{Severity: Breach, Kind: "unreadable", Message: "m", Commit: commit(3).String()}},
			Notes: 2,
		},
		Head:    commit(9),
		History: "h",
		Trailers: []trailerSum{{Hash: commit(4), ID: "a", Cycle: "1", Result: "improved", Record: "sha256:00"},
			{Hash: commit(5), ID: hexID, Cycle: "4", Result: "harvested", Record: hexCommit}},
	}
}

func encoded(st *verifyState) []byte { return encodedWith(st, nil) }

func encodedWith(st *verifyState, heads []bool) []byte {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	encodeState(w, st, heads)
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
	for _, format := range []byte{verifyStateFormat - 1, verifyStateFormat + 1} {
		other := bytes.Replace(data, []byte{'\n', verifyStateFormat}, []byte{'\n', format}, 1)
		other = resumState(other)
		if _, err := decodeState(other); err == nil {
			t.Errorf("a state of format %d decodes", format)
		}
	}
	if _, err := decodeState(resumState(data)); err != nil {
		t.Errorf("resumState changed the state: %v", err)
	}
}

// resumState writes the CRC of a changed state anew, as a writer would.
func resumState(data []byte) []byte {
	n := len(data) - 4
	return binary.BigEndian.AppendUint32(slices.Clip(data[:n]), crc32.Checksum(data[:n], castagnoliTable()))
}

// keyedState is the sample state keyed to a keys file written beside it,
// with more copies of some records, and the keys file's path and token.
func keyedState(t testing.TB) (*verifyState, []bool, string, [16]byte) {
	st := sampleState()
	ss := st.Sums.Sums
	copyOf := func(r recSum, c byte) recSum { r.Commit = commit(c); return r }
	// copies of a record on other commits: one as the ledger has them, one
	// edited (another digest)
	ss = append(ss, copyOf(ss[2], 30), copyOf(ss[0], 31))
	ss[len(ss)-1].Digest = "other"
	sortSums(ss)
	st.Sums.Sums = ss
	x := st.Sums.byKey()
	token := [16]byte{7, 7}
	path, _ := keysOf(t, x, token)
	st.Keyed, st.Token = true, token
	return st, x.head, path, token
}

// A state keyed to the keys file reads back as written with that file, and
// not without it, nor with another.
func TestStateKeyedRoundTrip(t *testing.T) {
	st, heads, path, token := keyedState(t)
	data := encodedWith(st, heads)
	open := func(tok [16]byte) (*keysFile, bool) { return openKeys(path, tok) }
	got, err := decodeStateWith(data, open)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, st) {
		t.Errorf("decodeStateWith(encodeState(st)) = %+v, want %+v", got.Sums.Sums, st.Sums.Sums)
	}
	if _, err := decodeState(data); err == nil {
		t.Error("a keyed state decodes without its keys file")
	}
	other, _ := keysOf(t, st.Sums.byKey(), [16]byte{8})
	if _, err := decodeStateWith(data, func([16]byte) (*keysFile, bool) { return openKeys(other, token) }); err == nil {
		t.Error("a keyed state decodes with a keys file of another token")
	}
	// a keys file of fewer records, with the token: its entries do not
	// match the summaries
	fewer := *st.Sums
	fewer.Sums = fewer.Sums[1:]
	short, _ := keysOf(t, fewer.byKey(), token)
	if _, err := decodeStateWith(data, func(tok [16]byte) (*keysFile, bool) { return openKeys(short, tok) }); err == nil {
		t.Error("a keyed state decodes with a keys file of other records")
	}
}

// The fields kept in binary take less room than the text: the sample's
// hex-shaped summary, keyed, takes a few bytes of verify-state.
func TestStateCompact(t *testing.T) {
	st := sampleState()
	one := func(r recSum) int {
		s := &verifyState{Sums: &ledgerSums{Sums: []recSum{r}}}
		return len(encoded(s)) - len(encoded(&verifyState{Sums: &ledgerSums{}}))
	}
	// commit 20, id 10, digest 16, commit digest 32, and a byte of shape
	// for each; the flags, cycle, result and V a byte each; the timestamp
	// (21), prev (5), who (11) and where (5) as text
	r := st.Sums.Sums[2]
	r.setCommitDigest(r.CommitDigest) // as sumOf keeps it
	if n, most := one(r), 20+11+17+33+4+21+5+11+5; n > most {
		t.Errorf("a summary of hex fields takes %d bytes, want at most %d", n, most)
	}
}

func FuzzDecodeState(f *testing.F) {
	f.Add(encoded(sampleState()))
	f.Add(encoded(&verifyState{Sums: &ledgerSums{}}))
	f.Add([]byte(verifyStateMagic + "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"))
	// a state keyed to the keys file the fuzzed ones are read with
	st, heads, path, token := keyedState(f)
	f.Add(encodedWith(st, heads))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeStateWith(data, func(tok [16]byte) (*keysFile, bool) {
			if tok != token {
				return nil, false
			}
			return openKeys(path, tok)
		})
		if err != nil {
			return
		}
		// What decodes is written back as it was read (its summaries whole,
		// not keyed).
		st.Keyed, st.Token = false, [16]byte{}
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

// fromHex takes lower-case hex digits alone, and toHex gives them back.
func TestHexForms(t *testing.T) {
	for _, c := range []struct {
		s  string
		ok bool
	}{{"00ff10ab", true}, {"00FF10ab", false}, {"00ff10a", false}, {"00ff10ag", false}, {"0g", false}, {"", true}, {"\x00\x00", false}, {"::", false}} {
		buf := make([]byte, 4)
		got := fromHex(buf, c.s, len(c.s))
		if got != c.ok {
			t.Errorf("fromHex(%q) = %v, want %v", c.s, got, c.ok)
			continue
		}
		if got {
			out := make([]byte, len(c.s))
			if len(c.s) > 0 {
				toHex(out, buf[:len(c.s)/2])
			}
			if string(out) != c.s {
				t.Errorf("toHex(fromHex(%q)) = %q", c.s, out)
			}
		}
	}
}

// A commit digest of the form ledger.CommitDigest gives is kept as its
// bytes, any other as text; either is the trailer that names it and no
// other.
func TestCommitDigestForms(t *testing.T) {
	for _, text := range []string{hexCommit, strings.ToUpper(hexCommit), "sha256:00", "", hexCommit[7:], hexCommit + "0"} {
		var r recSum
		r.setCommitDigest(text)
		if want := text == hexCommit; r.CommitBin != want {
			t.Errorf("%q: kept as bytes %v, want %v", text, r.CommitBin, want)
		}
		for _, other := range []string{hexCommit, strings.ToUpper(hexCommit), "sha256:00", "", hexCommit[7:], hexCommit + "0", hexCommit[:70] + "1"} {
			if got := r.commitDigestIs(other); got != (other == text) {
				t.Errorf("%q is %q: %v", text, other, got)
			}
		}
	}
}

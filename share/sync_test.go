package share

import (
	"bytes"
	"errors"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
		"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=C", "GIT_COMMITTER_EMAIL=c@example.com",
		"GIT_AUTHOR_DATE=@1700000000 +0000", "GIT_COMMITTER_DATE=@1700000000 +0000")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// setNote replaces the fitness note on rev with text.
func setNote(t *testing.T, dir, rev, text string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "note")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "notes", "--ref=evolve-fitness", "add", "-f", "-F", f, rev)
}

func TestMergeNote(t *testing.T) {
	r1 := `{"v":1,"id":"aaaaaaaaaaaaaaaaaaaa","cycle":1,"target":"t","result":"improved","sha":"` + strings.Repeat("1", 40) + `","canonical_sha":"` + strings.Repeat("1", 40) + `","goals_passing":1,"goals_total":1}`
	r2 := `{"v":1,"id":"bbbbbbbbbbbbbbbbbbbb","cycle":2,"target":"t","result":"improved","sha":"` + strings.Repeat("1", 40) + `","canonical_sha":"` + strings.Repeat("1", 40) + `","goals_passing":1,"goals_total":1}`
	for _, c := range []struct {
		name, ref, ours, theirs, want string
	}{
		{"union of records, sorted, once", LedgerRef, r2 + "\n" + r1 + "\n", r1 + "\n", r1 + "\n" + r2 + "\n"},
		{"records not canonical (a person's git notes) come out canonical", LedgerRef, r1 + "\n", strings.Replace(r2, `"v":1,`, `"v": 1, `, 1) + "\n", r1 + "\n" + r2 + "\n"},
		{"text that is no record is kept as it is, theirs after", LedgerRef, "hello\n" + r1 + "\n", r2 + "\nhello\n", "hello\n" + r1 + "\n" + r2 + "\n"},
		{"other refs: sorted unique lines", "refs/notes/evolve-fitness", "b\na\n", "c\na\n\n", "a\nb\nc\n"},
	} {
		got := MergeNote(c.ref, []byte(c.ours), []byte(c.theirs))
		if string(got) != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestMerge merges notes refs of two repositories that share a history, as
// git notes merge would see them, and checks the result with git.
func TestMerge(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	git(t, t.TempDir(), "init", "-q", "-b", "main", dir)
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "one")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
	git(t, dir, "notes", "--ref=evolve-fitness", "add", "-m", "base", "HEAD~1")
	base := git(t, dir, "rev-parse", "refs/notes/evolve-fitness")
	// theirs: a line on HEAD~1, a note on HEAD
	setNote(t, dir, "HEAD~1", "base\ntheirs\n")
	git(t, dir, "notes", "--ref=evolve-fitness", "add", "-m", "theirs on two", "HEAD")
	theirs := git(t, dir, "rev-parse", "refs/notes/evolve-fitness")
	// ours: back at base, then a line on HEAD~1
	git(t, dir, "update-ref", "refs/notes/evolve-fitness", base)
	setNote(t, dir, "HEAD~1", "base\nours\n")
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	th, _ := gitstore.ParseHash(theirs)
	result, merged, err := Merge(repo, "refs/notes/evolve-fitness", th)
	if err != nil {
		t.Fatal(err)
	}
	if merged != 2 {
		t.Errorf("merged %d notes, want 2", merged)
	}
	if got := git(t, dir, "notes", "--ref=evolve-fitness", "show", "HEAD~1"); got != "base\nours\ntheirs" {
		t.Errorf("the note on one: %q", got)
	}
	if got := git(t, dir, "notes", "--ref=evolve-fitness", "show", "HEAD"); got != "theirs on two" {
		t.Errorf("the note on two: %q", got)
	}
	if parents := git(t, dir, "log", "-1", "--format=%P", result.String()); !strings.Contains(parents, theirs) {
		t.Errorf("the merge's parents %q do not include theirs %s", parents, theirs)
	}
	// Merging again, or merging an ancestor, changes nothing.
	again, merged, err := Merge(repo, "refs/notes/evolve-fitness", th)
	if err != nil || again != result || merged != 0 {
		t.Errorf("merging theirs again: %s, %d, %v", again.Short(), merged, err)
	}
	// Behind: a fast-forward.
	git(t, dir, "notes", "--ref=evolve-fitness", "add", "-f", "-m", "later", "HEAD")
	later := git(t, dir, "rev-parse", "refs/notes/evolve-fitness")
	git(t, dir, "update-ref", "refs/notes/evolve-fitness", result.String())
	lh, _ := gitstore.ParseHash(later)
	ff, _, err := Merge(repo, "refs/notes/evolve-fitness", lh)
	if err != nil || ff.String() != later {
		t.Errorf("a fast-forward to %s gave %s, %v", later[:7], ff.Short(), err)
	}
	// A note removed on their side stays here.
	git(t, dir, "notes", "--ref=evolve-fitness", "remove", "HEAD")
	removed, _ := gitstore.ParseHash(git(t, dir, "rev-parse", "refs/notes/evolve-fitness"))
	git(t, dir, "update-ref", "refs/notes/evolve-fitness", later)
	setNote(t, dir, "HEAD~1", "base\nours\ntheirs\nours again\n")
	if _, _, err := Merge(repo, "refs/notes/evolve-fitness", removed); err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "notes", "--ref=evolve-fitness", "show", "HEAD"); got != "later" {
		t.Errorf("the note their side removed: %q, want it kept", got)
	}
	if out := git(t, dir, "fsck", "--no-dangling", "--strict"); bytes.Contains([]byte(out), []byte("error")) {
		t.Errorf("fsck: %s", out)
	}
}

// TestSyncGivesUpAtItsPatience: when another clone pushes between every
// fetch and push, Sync retries with backoff until its patience is up, then
// says so, counting the lost races; the local ledger keeps its records.
func TestSyncGivesUpAtItsPatience(t *testing.T) {
	root := t.TempDir()
	bare := filepath.Join(root, "remote.git")
	git(t, root, "init", "-q", "--bare", bare)
	dir := filepath.Join(root, "a")
	git(t, root, "clone", "-q", bare, dir)
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "one")
	git(t, dir, "notes", "--ref=evolve-fitness", "add", "-m", "ours", "HEAD")
	other := filepath.Join(root, "b")
	git(t, root, "clone", "-q", bare, other)
	git(t, other, "commit", "-q", "--allow-empty", "-m", "two")
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	n := 0
	const patience = 3 * time.Second
	// A fake clock: each round takes 300 ms of it, however long it takes
	// the machine, and a wait passes at once.
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rep, err := Sync(repo, "origin", Options{
		Patience: patience,
		now:      func() time.Time { return clock },
		sleep:    func(d time.Duration) { clock = clock.Add(d) },
		// Another clone pushes each time, just before this one does.
		BeforePush: func(string, gitstore.Hash) error {
			n++
			clock = clock.Add(300 * time.Millisecond)
			git(t, other, "notes", "--ref=evolve-fitness", "add", "-f", "-m", "theirs "+strconv.Itoa(n), "HEAD")
			git(t, other, "push", "-q", "-f", "origin", "refs/notes/evolve-fitness")
			return nil
		},
	})
	var gave *GaveUpError
	if !errors.As(err, &gave) || !errors.Is(err, gitstore.ErrPushRejected) {
		t.Fatalf("Sync: %v, want a GaveUpError", err)
	}
	// Rounds of 300 ms, waits of 0.3–0.6 s, then 0.6–1.2 s, 1.2–2.4 s: the
	// third or fourth wait would pass 3 s.
	if rep.Attempts < 3 || rep.Attempts > 4 || rep.LeaseLosses != rep.Attempts || gave.Attempts != rep.Attempts {
		t.Errorf("attempts %d, lease losses %d (error says %d): want every attempt lost, 3 or 4 of them", rep.Attempts, rep.LeaseLosses, gave.Attempts)
	}
	// It stops before the next wait would pass its patience: past it by
	// at most the round that lost last.
	if rep.Elapsed > patience+300*time.Millisecond {
		t.Errorf("took %s with a patience of %s", rep.Elapsed, patience)
	}
	if got := git(t, dir, "notes", "--ref=evolve-fitness", "show", "HEAD"); !strings.Contains(got, "ours") {
		t.Errorf("the local note after giving up: %q", got)
	}
	if !strings.Contains(err.Error(), "run git evolve sync again") {
		t.Errorf("the error does not say what to do: %v", err)
	}
}

func TestBackoff(t *testing.T) {
	for _, took := range []time.Duration{0, 5 * time.Millisecond, 300 * time.Millisecond, 2 * time.Second} {
		for attempt := 2; attempt < 20; attempt++ {
			d := backoff(attempt, took)
			top := max(20*time.Millisecond, took) << min(attempt-2, 3)
			if d < top/2 || d > top {
				t.Errorf("backoff(%d, %s) = %s, want within [%s, %s]", attempt, took, d, top/2, top)
			}
		}
	}
}

// twoClones makes a bare remote and two clones of it, a (dir) and b
// (other), each fetching the evolve notes refs to its remote-tracking
// refs; a has pushed a commit and a note "first" on it in
// refs/notes/evolve-fitness.
func twoClones(t *testing.T) (bare, dir, other string) {
	t.Helper()
	root := t.TempDir()
	bare = filepath.Join(root, "remote.git")
	git(t, root, "init", "-q", "--bare", bare)
	dir = filepath.Join(root, "a")
	git(t, root, "clone", "-q", bare, dir)
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "one")
	git(t, dir, "push", "-q", "origin", "HEAD")
	other = filepath.Join(root, "b")
	git(t, root, "clone", "-q", bare, other)
	fetchRefs := "+refs/notes/evolve*:refs/notes/remotes/origin/evolve*"
	git(t, dir, "config", "--add", "remote.origin.fetch", fetchRefs)
	git(t, other, "config", "--add", "remote.origin.fetch", fetchRefs)
	git(t, dir, "notes", "--ref=evolve-fitness", "add", "-m", "first", "HEAD")
	git(t, dir, "push", "-q", "origin", "refs/notes/evolve-fitness")
	return bare, dir, other
}

// TestSyncAsLastSeen: a sync that starts from the remote as last seen
// pushes what the remote lacks without fetching when the remote did not
// move; when another clone pushed since, the lease refuses that push and a
// round that fetches merges both, not counted as a lost race; and a local
// ref behind its last-seen copy fetches first.
func TestSyncAsLastSeen(t *testing.T) {
	testenv.Slow(t)
	bare, dir, other := twoClones(t)
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	sync := func() *Report {
		t.Helper()
		rep, err := Sync(repo, "origin", Options{AsLastSeen: true})
		if err != nil {
			t.Fatalf("Sync: %v", err)
		}
		return rep
	}
	tracking := func(ref string) string {
		t.Helper()
		out, _ := exec.Command("git", "-C", dir, "rev-parse", "-q", "--verify", ref).Output()
		return strings.TrimSpace(string(out))
	}

	// Not moved: one round, and a ref only the remote has is not fetched.
	git(t, other, "fetch", "-q", "origin")
	git(t, other, "notes", "--ref=evolve-other", "add", "-m", "theirs", "HEAD")
	git(t, other, "push", "-q", "origin", "refs/notes/evolve-other")
	setNote(t, dir, "HEAD", "first\nsecond\n")
	rep := sync()
	if rep.Attempts != 1 || rep.LeaseLosses != 0 {
		t.Errorf("not moved: %d attempts, %d lease losses; want 1, 0", rep.Attempts, rep.LeaseLosses)
	}
	if got := git(t, bare, "notes", "--ref=evolve-fitness", "show", "HEAD"); got != "first\nsecond" {
		t.Errorf("not moved: the remote's note %q", got)
	}
	if got := tracking("refs/notes/remotes/origin/evolve-other"); got != "" {
		t.Errorf("not moved: the remote was fetched (its evolve-other is %s here)", got)
	}

	// Moved: the other clone pushed a line since; both lines arrive.
	git(t, other, "fetch", "-q", "origin", "+refs/notes/evolve-fitness:refs/notes/evolve-fitness")
	git(t, other, "notes", "--ref=evolve-fitness", "add", "-f", "-m", "first\nsecond\ntheirs", "HEAD")
	git(t, other, "push", "-q", "origin", "refs/notes/evolve-fitness")
	setNote(t, dir, "HEAD", "first\nsecond\nthird\n")
	rep = sync()
	if rep.Attempts != 2 || rep.LeaseLosses != 0 {
		t.Errorf("moved: %d attempts, %d lease losses; want 2, 0", rep.Attempts, rep.LeaseLosses)
	}
	if got := git(t, bare, "notes", "--ref=evolve-fitness", "show", "HEAD"); got != "first\nsecond\ntheirs\nthird" {
		t.Errorf("moved: the remote's note %q", got)
	}
	if got := tracking("refs/notes/remotes/origin/evolve-other"); got == "" {
		t.Errorf("moved: the round after the refused lease did not fetch")
	}

	// Two refs ahead as last seen, one of them moved on the remote since:
	// the push moves the first and is refused the second; the round that
	// fetches merges and pushes that one. Both are reported pushed.
	git(t, other, "fetch", "-q", "origin", "+refs/notes/evolve-other:refs/notes/evolve-other")
	git(t, other, "notes", "--ref=evolve-other", "add", "-f", "-m", "theirs\nagain", "HEAD")
	git(t, other, "push", "-q", "origin", "refs/notes/evolve-other")
	setNote(t, dir, "HEAD", "first\nsecond\ntheirs\nthird\nfifth\n")
	git(t, dir, "notes", "--ref=evolve-other", "add", "-f", "-m", "theirs\nmine", "HEAD")
	rep = sync()
	if rep.Attempts != 2 || rep.LeaseLosses != 0 {
		t.Errorf("one of two moved: %d attempts, %d lease losses; want 2, 0", rep.Attempts, rep.LeaseLosses)
	}
	for _, r := range rep.Refs {
		if !r.Pushed {
			t.Errorf("one of two moved: %s not reported pushed", r.Ref)
		}
	}
	if got := git(t, bare, "notes", "--ref=evolve-other", "show", "HEAD"); got != "again\nmine\ntheirs" { // (other refs merge as sorted unique lines)
		t.Errorf("one of two moved: the remote's evolve-other %q", got)
	}

	// Behind what was last seen (and the remote moved on since): fetched
	// and fast-forwarded to what the remote has now, nothing pushed.
	git(t, dir, "update-ref", "refs/notes/evolve-fitness", "refs/notes/evolve-fitness~1")
	git(t, other, "fetch", "-q", "origin", "+refs/notes/evolve-fitness:refs/notes/evolve-fitness")
	git(t, other, "notes", "--ref=evolve-fitness", "add", "-f", "-m", "first\nsecond\ntheirs\nthird\nfourth", "HEAD")
	git(t, other, "push", "-q", "origin", "refs/notes/evolve-fitness")
	ahead := git(t, bare, "rev-parse", "refs/notes/evolve-fitness")
	rep = sync()
	if got := git(t, dir, "rev-parse", "refs/notes/evolve-fitness"); got != ahead {
		t.Errorf("behind: the local ref is %s, want %s", got, ahead)
	}
	for _, r := range rep.Refs {
		if r.Pushed {
			t.Errorf("behind: %s was pushed", r.Ref)
		}
	}
}

// A transcript the refused push of a no-fetch round created is counted,
// and the remote's copy of it is known here.
func TestSyncAsLastSeenTranscripts(t *testing.T) {
	bare, dir, other := twoClones(t)
	git(t, dir, "fetch", "-q", "origin")
	// The remote moves on behind this clone's back.
	git(t, other, "fetch", "-q", "origin", "+refs/notes/evolve-fitness:refs/notes/evolve-fitness")
	git(t, other, "notes", "--ref=evolve-fitness", "add", "-f", "-m", "first\ntheirs", "HEAD")
	git(t, other, "push", "-q", "origin", "refs/notes/evolve-fitness")
	// Here: a line more, and a transcript.
	setNote(t, dir, "HEAD", "first\nmine\n")
	git(t, dir, "update-ref", TranscriptsPrefix+"t1", git(t, dir, "rev-parse", "HEAD"))
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	rep, err := Sync(repo, "origin", Options{AsLastSeen: true, Transcripts: true})
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if rep.Attempts != 2 || rep.Transcripts != 1 {
		t.Errorf("%d attempts, %d transcripts; want 2, 1", rep.Attempts, rep.Transcripts)
	}
	if got := git(t, bare, "rev-parse", TranscriptsPrefix+"t1"); got == "" {
		t.Error("the transcript is not on the remote")
	}
	if got := git(t, bare, "notes", "--ref=evolve-fitness", "show", "HEAD"); got != "first\nmine\ntheirs" {
		t.Errorf("the remote's note %q", got)
	}
}

// A ref the remote has and this clone never saw (no remote-tracking copy)
// is pushed as new, which the remote refuses; the round that fetches
// merges both sides' notes.
func TestSyncAsLastSeenUnseenRef(t *testing.T) {
	bare, dir, other := twoClones(t)
	git(t, other, "notes", "--ref=evolve-other", "add", "-m", "theirs", "HEAD")
	git(t, other, "push", "-q", "origin", "refs/notes/evolve-other")
	git(t, dir, "notes", "--ref=evolve-other", "add", "-m", "mine", "HEAD")
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	rep, err := Sync(repo, "origin", Options{AsLastSeen: true})
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if rep.Attempts != 2 || rep.LeaseLosses != 0 {
		t.Errorf("%d attempts, %d lease losses; want 2, 0", rep.Attempts, rep.LeaseLosses)
	}
	if got := git(t, bare, "notes", "--ref=evolve-other", "show", "HEAD"); got != "mine\ntheirs" {
		t.Errorf("the remote's evolve-other %q", got)
	}
}

// A merge of the ledger names in its Evolve-Largest-Cycle trailer the
// larger of what the merge base names and the largest cycle of the notes
// either side changed since, so that a reader with no cycle index has a
// bound at a merge too. Neither tip's own trailer is taken: here the other
// side's names too little, and so does ours once it is a commit accepted
// as it was. When the base names none (plain git's notes commits), the
// merge names none.
func TestMergeNamesTheLargestCycle(t *testing.T) {
	setup := func(baseTrailer string) (dir string, record func(rev string, cycle int, largest string) string) {
		dir = filepath.Join(t.TempDir(), "r")
		git(t, t.TempDir(), "init", "-q", "-b", "main", dir)
		for _, m := range []string{"one", "two", "three", "four"} {
			git(t, dir, "commit", "-q", "--allow-empty", "-m", m)
		}
		record = func(rev string, cycle int, largest string) string {
			git(t, dir, "notes", "--ref=evolve", "add", "-f", "-m", `{"v":1,"cycle":`+strconv.Itoa(cycle)+`,"target":"t","result":"improved"}`, rev)
			if largest == "" {
				return git(t, dir, "rev-parse", "refs/notes/evolve")
			}
			args := []string{"commit-tree", "refs/notes/evolve^{tree}"}
			if parents := strings.Fields(git(t, dir, "log", "-1", "--format=%P", "refs/notes/evolve")); len(parents) > 0 {
				args = append(args, "-p", parents[0])
			}
			c := git(t, dir, append(args, "-m", "git evolve: record cycle "+strconv.Itoa(cycle)+" (improved)", "-m", "Evolve-Largest-Cycle: "+largest)...)
			git(t, dir, "update-ref", "refs/notes/evolve", c)
			return c
		}
		return dir, record
	}
	merge := func(dir, theirs string) string {
		t.Helper()
		repo, err := gitstore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer repo.Close()
		th, _ := gitstore.ParseHash(theirs)
		result, _, err := Merge(repo, LedgerRef, th)
		if err != nil {
			t.Fatal(err)
		}
		return git(t, dir, "log", "-1", "--format=%B", result.String())
	}
	for _, tc := range []struct {
		what      string
		baseNames string
		ours      func(record func(string, int, string) string) // on the base
		want      string
	}{
		{"ours records cycle 3", "1", func(rec func(string, int, string) string) { rec("HEAD", 3, "3") }, "Evolve-Largest-Cycle: 5"},
		{"ours appends cycle 9 by plain git", "1", func(rec func(string, int, string) string) { rec("HEAD", 9, "") }, "Evolve-Largest-Cycle: 9"},
		{"ours is a commit naming 1 whose ledger holds 7", "1", func(rec func(string, int, string) string) { rec("HEAD", 7, "1") }, "Evolve-Largest-Cycle: 7"},
		{"the base names none", "", func(rec func(string, int, string) string) { rec("HEAD", 3, "3") }, ""},
	} {
		dir, record := setup(tc.baseNames)
		base := record("HEAD~3", 1, tc.baseNames)
		theirs := record("HEAD~1", 5, "2") // names too little
		git(t, dir, "update-ref", "refs/notes/evolve", base)
		tc.ours(record)
		msg := merge(dir, theirs)
		if tc.want == "" && strings.Contains(msg, "Evolve-Largest-Cycle") || tc.want != "" && !strings.HasSuffix(msg, "\n\n"+tc.want) {
			t.Errorf("%s: the merge with theirs (cycle 5, naming 2) says:\n%s\nwant %q", tc.what, msg, tc.want)
		}
	}
}

package audit

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The history check asks git diff-tree for each notes commit's changes
// (gitstore.NotesDiffer) and reads the commits oldest first; before, it
// diffed the trees itself, newest first (treeWalk). Over the random
// histories of TestFullAgreesWithKept, and trees git would not write (a
// note beside fanout subtrees, an object noted at two paths, a name in
// upper case), both find the same, in the same order: verify from git
// alone, its whole history read, and the check of a fetched ledger.
func TestHistoryWalkAgreesWithTreeWalk(t *testing.T) {
	seeds := []int64{1, 2, 3, 4}
	steps := 16
	if testing.Short() {
		seeds, steps = seeds[:2], 10
	}
	if s := os.Getenv("GIT_EVOLVE_AGREE_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seeds = []int64{n}
	}
	root := t.TempDir()
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"} {
		t.Setenv(k, "Ann")
	}
	for _, k := range []string{"GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(k, "ann@example.com")
	}
	t.Setenv("HOME", root)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_EVOLVE_HOST", "box")
	t.Setenv("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
	t.Setenv("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			agreeWith(t, filepath.Join(root, strconv.FormatInt(seed, 10)), seed, steps, 11+oddTreeKinds, compareWalks)
		})
	}
}

// compareWalks verifies from git alone, the whole history read, and checks
// what the other clone's ledger as fetched would bring, each with both
// walks, and fails when they differ.
func compareWalks(t *testing.T, c *clone, seed int64, did []string) {
	t.Helper()
	reset := c.rememberVerified()
	defer reset()
	both := func(what string, run func() (string, error)) {
		t.Helper()
		treeWalk = false
		got, err1 := run()
		treeWalk = true
		want, err2 := run()
		treeWalk = false
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("seed %d after %s: %s: the errors differ: %v, walking the trees %v", seed, strings.Join(did, ", "), what, err1, err2)
		}
		if got != want {
			t.Fatalf("seed %d after %s: %s: the answers differ\ngit diff-tree: %s\ntrees walked:  %s", seed, strings.Join(did, ", "), what, got, want)
		}
	}
	for _, since := range []bool{false, true} {
		both(fmt.Sprintf("verify (since verified: %v)", since), func() (string, error) {
			if !since {
				os.Remove(verifiedPath(c.repo))
			} else {
				reset()
			}
			rep, err := VerifyWith(c.l, VerifyOptions{FromGit: true})
			if err != nil {
				return "", err
			}
			return reportText(rep), nil
		})
	}
	from, _, err := c.repo.RefHash("refs/notes/evolve")
	if err != nil {
		t.Fatal(err)
	}
	to, ok, err := c.repo.RefHash("refs/notes/remotes/b/evolve")
	if err != nil || !ok {
		return
	}
	both("incoming", func() (string, error) {
		found, err := CheckIncoming(c.repo, from, to)
		if err != nil {
			return "", err
		}
		return fmt.Sprint(found), nil
	})
}

// oddTreeKinds is how many kinds of tree oddTree writes.
const oddTreeKinds = 4

// oddTree writes a notes commit whose tree git would not write, of kind k:
// a note in a fanout subtree beside notes at the root, an object noted at
// two paths (at the root and in a subtree), a note named in upper case,
// or the same object noted at two names that differ in case.
func oddTree(c *clone, rng *rand.Rand, k int) string {
	c.t.Helper()
	obj := c.git("rev-parse", fmt.Sprintf("HEAD~%d", rng.Intn(10)))
	text := fmt.Sprintf(`{"v":1,"id":"odd%05d","cycle":%d,"result":"harvested"}`, rng.Intn(100000), 300+rng.Intn(20))
	if old := c.tryOutput("notes", "--ref=evolve", "show", obj); old != "" && rng.Intn(2) == 0 {
		text = strings.Replace(old, `"result":"`, `"result":"x`, 1) // an edit of what is there
	}
	blob := c.gitIn(text+"\n", "hash-object", "-w", "--stdin")
	var listing string
	if _, ok, _ := c.repo.RefHash("refs/notes/evolve"); ok {
		listing = c.git("ls-tree", "refs/notes/evolve")
	}
	var kept []string
	for _, line := range strings.Split(listing, "\n") {
		if line == "" || strings.HasSuffix(line, "\t"+obj) && k != 1 && k != 3 {
			continue
		}
		kept = append(kept, line)
	}
	sub := func(name, blob string) string {
		return c.gitIn(fmt.Sprintf("100644 blob %s\t%s\n", blob, name), "mktree")
	}
	var what string
	switch k {
	case 0:
		kept = append(kept, fmt.Sprintf("040000 tree %s\t%s", sub(obj[2:], blob), obj[:2]))
		what = "a note in a subtree beside notes"
	case 1:
		kept = append(kept, fmt.Sprintf("040000 tree %s\t%s", sub(obj[2:], blob), obj[:2]))
		what = "an object noted at two paths"
	case 2:
		kept = append(kept, fmt.Sprintf("100644 blob %s\t%s", blob, strings.ToUpper(obj)))
		what = "a note named in upper case"
	case 3:
		kept = append(kept, fmt.Sprintf("100644 blob %s\t%s", blob, strings.ToUpper(obj[:20])+obj[20:]))
		what = "an object noted at two names"
	}
	// mktree refuses two entries of one name: a subtree where a fanout
	// subtree is already keeps the first
	seen := map[string]bool{}
	var lines []string
	for _, line := range kept {
		name := line[strings.IndexByte(line, '\t')+1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		lines = append(lines, line)
	}
	tree := c.gitIn(strings.Join(lines, "\n")+"\n", "mktree")
	args := []string{"commit-tree", "-m", what}
	if tip, ok, _ := c.repo.RefHash("refs/notes/evolve"); ok {
		args = append(args, "-p", tip.String())
	}
	commit := c.git(append(args, tree)...)
	c.git("update-ref", "refs/notes/evolve", commit)
	return what
}

// gitIn is git with input.
func (c *clone) gitIn(input string, args ...string) string {
	c.t.Helper()
	cmd := gitCmd(c.dir, args...)
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// tryOutput is git's output, "" when it fails.
func (c *clone) tryOutput(args ...string) string {
	out, err := gitCmd(c.dir, args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	return cmd
}

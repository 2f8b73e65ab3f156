package audit

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// A verify that builds on what earlier ones kept (the
// summaries, the delta) answers what a verify from git alone (FromGit)
// answers, over histories made at random: records, records plain git
// appends, records edited and removed, the ledger reset, another clone's
// records merged (by git notes merge -s cat_sort_uniq, a union the
// ledger's format admits) or read beside the ledger as a fetch leaves
// them, repairs and acknowledgements. The seed is in the subtest's
// name; GIT_EVOLVE_AGREE_SEED=N runs seed N alone, GIT_EVOLVE_AGREE_STEPS
// sets the steps of each.
func TestFullAgreesWithKept(t *testing.T) {
	seeds := []int64{1, 2}
	steps := 14
	if testing.Short() {
		seeds, steps = seeds[:1], 6
	}
	if s := os.Getenv("GIT_EVOLVE_AGREE_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seeds = []int64{n}
	}
	if s := os.Getenv("GIT_EVOLVE_AGREE_STEPS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		steps = n
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
			agree(t, filepath.Join(root, strconv.FormatInt(seed, 10)), seed, steps)
		})
	}
}

// clone is a repository the agreement test writes to.
type clone struct {
	t    *testing.T
	dir  string
	repo *gitstore.Repo
	l    *store.Ledger
	now  func() time.Time
}

// rememberVerified returns a function that puts back what this clone
// remembers as verified (verifiedPath) as it is now, or its absence.
func (c *clone) rememberVerified() (reset func()) {
	path := verifiedPath(c.repo)
	remembered, err := os.ReadFile(path)
	had := err == nil
	return func() {
		if had {
			os.WriteFile(path, remembered, 0o644)
		} else {
			os.Remove(path)
		}
	}
}

func (c *clone) git(args ...string) string {
	c.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = c.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// tryGit is git whose failure is let be (a reset with no parent, …).
func (c *clone) tryGit(args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = c.dir
	_ = cmd.Run()
}

func openClone(t *testing.T, dir string) *clone {
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(time.Minute); return clock }
	return &clone{t: t, dir: dir, repo: repo, l: store.Open(repo), now: now}
}

// noted lists the commits the ledger has notes on.
func (c *clone) noted() []string {
	var out []string
	for _, line := range strings.Split(c.git("notes", "--ref=evolve", "list"), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			out = append(out, f[1])
		}
	}
	return out
}

func (c *clone) record(rng *rand.Rand) {
	c.t.Helper()
	one, two := 1, 2
	rec := ledger.Record{Target: "t", Result: ledger.Improved, GoalsPassing: &one, GoalsTotal: &two,
		CanonicalSHA: fmt.Sprintf("HEAD~%d", rng.Intn(10))}
	if err := c.put(rec); err != nil {
		c.t.Fatalf("record: %v", err)
	}
}

// put records rec as git evolve record does, through the store alone (this
// package reads the ledger and knows no cycle): on the commit it names,
// the next cycle number, linked to the last record. The tests write from
// one process: the ledger's lock is not taken.
func (c *clone) put(rec ledger.Record) error {
	commits, errs, err := c.repo.LookupCommits(rec.CanonicalSHA)
	if err != nil {
		return err
	}
	if errs[0] != nil {
		return errs[0]
	}
	commit := commits[0]
	rec.CanonicalSHA, rec.SHA, rec.V = commit.String(), commit.String(), ledger.SchemaMajor
	rec.Timestamp = c.now().Format(time.RFC3339)
	copies, err := c.l.CopiesMax()
	if err != nil {
		return err
	}
	journal, err := c.l.JournalRecords()
	if err != nil {
		return err
	}
	return c.l.Update(func(snap *gitstore.Notes, ix *store.Index) (map[gitstore.Hash][]ledger.Record, func(int) string, error) {
		rec.Cycle = max(ix.Max(), copies)
		for _, r := range journal {
			rec.Cycle = max(rec.Cycle, r.Cycle)
		}
		rec.Cycle++
		if err := c.l.Stamp(&rec, snap, ix); err != nil {
			return nil, nil, err
		}
		rec.ID = rec.DeriveID(commit.String())
		return map[gitstore.Hash][]ledger.Record{commit: {rec}},
			func(int) string { return fmt.Sprintf(store.RecordSubject, rec.Cycle, rec.Result) }, nil
	})
}

func agree(t *testing.T, dir string, seed int64, steps int) {
	agreeWith(t, dir, seed, steps, 11, compareVerifies)
}

// agreeWith makes a history as agree does, of ops kinds of step (past the
// eleven agree takes, those of oddTrees), and calls check after each step.
func agreeWith(t *testing.T, dir string, seed int64, steps, ops int, check func(*testing.T, *clone, int64, []string)) {
	rng := rand.New(rand.NewSource(seed))
	a := &clone{t: t, dir: filepath.Join(dir, "a")}
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a.git("init", "-q", "-b", "main")
	for i := 0; i < 12; i++ {
		a.git("commit", "-q", "--allow-empty", "-m", fmt.Sprintf("c%d", i))
	}
	a.git("clone", "-q", a.dir, filepath.Join(dir, "b"))
	a = openClone(t, a.dir)
	b := openClone(t, filepath.Join(dir, "b"))
	var did []string
	for step := 0; step < steps; step++ {
		op := rng.Intn(ops)
		switch op {
		case 0, 1, 2:
			a.record(rng)
			did = append(did, "record")
		case 3:
			// Plain git's append: the seeds' shape, no id.
			n := 100 + rng.Intn(20)
			a.git("notes", "--ref=evolve", "append", "-m", fmt.Sprintf(`{"v":1,"cycle":%d,"result":"harvested"}`, n), fmt.Sprintf("HEAD~%d", rng.Intn(10)))
			did = append(did, "plain append")
		case 4:
			// A record edited by hand.
			if on := a.noted(); len(on) > 0 {
				obj := on[rng.Intn(len(on))]
				text := a.git("notes", "--ref=evolve", "show", obj)
				edited := strings.Replace(text, `"goals_total":2`, `"goals_total":3`, 1)
				if edited == text {
					edited = strings.Replace(text, `"result":"harvested"`, `"result":"improved","target":"x","goals_passing":1,"goals_total":1`, 1)
				}
				a.git("notes", "--ref=evolve", "add", "-f", "-m", edited, obj)
				did = append(did, "edit")
			}
		case 5:
			// A note removed.
			if on := a.noted(); len(on) > 0 {
				a.git("notes", "--ref=evolve", "remove", on[rng.Intn(len(on))])
				did = append(did, "remove")
			}
		case 6:
			// The ledger reset to an older commit of its history.
			a.tryGit("update-ref", "refs/notes/evolve", "refs/notes/evolve~1")
			did = append(did, "reset")
		case 7:
			// Another clone's records, merged as git merges notes, or left
			// beside the ledger as a fetch leaves them.
			for i := rng.Intn(3); i >= 0; i-- {
				if rng.Intn(4) == 0 {
					b.git("notes", "--ref=evolve", "append", "-m", fmt.Sprintf(`{"v":1,"cycle":%d,"result":"harvested"}`, 200+rng.Intn(20)), fmt.Sprintf("HEAD~%d", rng.Intn(10)))
				} else {
					b.record(rng)
				}
			}
			a.tryGit("fetch", "-q", "../b", "+refs/notes/evolve:refs/notes/remotes/b/evolve")
			if rng.Intn(2) == 0 {
				// (git's own union merge, which the ledger's format admits
				// as well as sync's)
				a.tryGit("notes", "--ref=evolve", "merge", "-q", "-s", "cat_sort_uniq", "refs/notes/remotes/b/evolve")
				did = append(did, "sync")
			} else {
				did = append(did, "fetch")
			}
		case 8:
			if _, err := Repair(a.l, false); err != nil {
				t.Logf("repair: %v", err)
			}
			did = append(did, "repair")
		case 9:
			// A breach acknowledged.
			rep, err := VerifyWith(a.l, VerifyOptions{FromGit: true})
			if err == nil {
				for _, f := range rep.Findings {
					if h, err := gitstore.ParseHash(f.NotesCommit); err == nil && f.Severity == Breach {
						if _, err := a.repo.Commit(h); err == nil {
							if _, err := Accept(a.repo, h, "kept", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
								t.Fatalf("accept: %v", err)
							}
							break
						}
					}
				}
			}
			did = append(did, "accept")
		case 10:
			a.git("commit", "-q", "--allow-empty", "-m", fmt.Sprintf("s%d", step))
			did = append(did, "commit")
		default:
			did = append(did, oddTree(a, rng, op-11))
		}
		check(t, a, seed, did)
	}
}

// compareVerifies runs a verify that builds on what is kept, one from git
// alone and the first again, each with what this clone remembers as it
// was, and fails when they differ.
func compareVerifies(t *testing.T, c *clone, seed int64, did []string) {
	t.Helper()
	reset := c.rememberVerified()
	kept, err1 := VerifyWith(c.l, VerifyOptions{})
	reset()
	full, err2 := VerifyWith(c.l, VerifyOptions{FromGit: true})
	reset()
	again, err3 := VerifyWith(c.l, VerifyOptions{})
	if (err1 == nil) != (err2 == nil) || (err1 == nil) != (err3 == nil) {
		t.Fatalf("seed %d after %s: the errors differ: kept %v, from git %v, kept again %v", seed, strings.Join(did, ", "), err1, err2, err3)
	}
	if err1 != nil {
		return
	}
	k, f, g := reportText(kept), reportText(full), reportText(again)
	if k != f || k != g {
		t.Fatalf("seed %d after %s: the answers differ\nkept:       %s\nfrom git:   %s\nkept again: %s", seed, strings.Join(did, ", "), k, f, g)
	}
	// The verify after, which reads the history on from where the last
	// one remembered it clean (when the ledger is not: the notes commit
	// before the oldest breach), finds the same breaches.
	next, err := VerifyWith(c.l, VerifyOptions{})
	if err != nil {
		t.Fatalf("seed %d after %s: the verify after: %v", seed, strings.Join(did, ", "), err)
	}
	if b, n := breachText(again), breachText(next); b != n {
		t.Fatalf("seed %d after %s: the verify after finds other breaches\nbefore: %s\nafter:  %s", seed, strings.Join(did, ", "), b, n)
	}
}

// breachText is the breaches a report names, in order.
func breachText(rep *Report) string {
	var out []string
	for _, f := range rep.Findings {
		if f.Severity == Breach {
			data, _ := json.Marshal(f)
			out = append(out, string(data))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// reportText is what a report says, without how much of the history was
// read.
func reportText(rep *Report) string {
	r := *rep
	r.History = 0
	data, _ := json.Marshal(r)
	return string(data)
}

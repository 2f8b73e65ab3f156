package loop

// Shared fixtures of the loop tests: real repositories made with the git
// CLI in temporary directories, a ledger on a clock the test moves, and an
// environment the loop reads through a map. The names start with fx so
// that they stay clear of other test files of the package.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/git-evolve/git-evolve/ledger"
)

// fxBase is a time the tests measure from: now, to the second, so that
// markers written by the file system (whose age is their modification
// time) and records stamped by the ledger's clock agree.
func fxBase() time.Time { return time.Now().UTC().Truncate(time.Second) }

// fxScrubGit removes the GIT_* variables the test inherited and gives git a
// fixed identity and an empty home.
func fxScrubGit(t *testing.T) string {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_") || k == "EVOLVE_GOVERNOR_CMD" || k == "EVOLVE_KILL_TTL_DAYS" {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "Cal", "GIT_COMMITTER_EMAIL": "cal@example.com",
		"GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z", "GIT_EVOLVE_HOST": "testhost",
		"LC_ALL": "C", "TZ": "UTC"} {
		t.Setenv(k, v)
	}
	return home
}

func fxGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return testenv.Git(t, dir, args...)
}

// fxRepoDir makes a repository named name with one commit.
func fxRepoDir(t *testing.T, name string) string {
	t.Helper()
	fxScrubGit(t)
	dir := filepath.Join(t.TempDir(), name)
	fxGit(t, "", "init", "-q", dir)
	fxGit(t, dir, "commit", "-q", "--allow-empty", "-m", "first")
	return dir
}

// fxEnv is a repository, its ledger on a clock, and the environment the
// loop reads.
type fxEnv struct {
	t      *testing.T
	dir    string
	repo   *gitstore.Repo
	ledger *cycle.Ledger
	clock  time.Time // the ledger's clock: records are stamped with it
	env    map[string]string
	config string // XDG_CONFIG_HOME as the loop sees it
}

func fxNew(t *testing.T) *fxEnv {
	t.Helper()
	dir := fxRepoDir(t, "app")
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	f := &fxEnv{t: t, dir: dir, repo: repo, clock: fxBase().Add(-time.Hour)}
	f.ledger = cycle.Open(repo, func() time.Time { return f.clock })
	f.config = filepath.Join(t.TempDir(), "xdg")
	f.env = map[string]string{"XDG_CONFIG_HOME": f.config, "HOME": t.TempDir()}
	return f
}

func (f *fxEnv) getenv(k string) string { return f.env[k] }

// load reads the loop's state at now.
func (f *fxEnv) load(now time.Time) *State {
	f.t.Helper()
	s, err := Load(f.ledger, LoadOptions{Now: now, Getenv: f.getenv})
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// fxRec describes a record for the ledger.
type fxRec struct {
	result  string
	gate    string
	rung    string
	item    string
	aborted bool
	passing int
	total   int
	// before is the goals measured as the cycle started (nil: none).
	before        *fxBefore
	failingAfter  []string
	goalDigest    string
	target        string
	oscillations  int
	at            time.Time // the ledger's clock for this record (zero: as it is)
	noGoalsCounts bool
}

type fxBefore struct {
	passing, total int
	failing        []string
}

// record stores r in the ledger (productive and quarantined records as
// notes on HEAD, the others in the journal) and returns its cycle number.
func (f *fxEnv) record(r fxRec) int {
	f.t.Helper()
	if !r.at.IsZero() {
		f.clock = r.at
	}
	target := r.target
	if target == "" {
		target = "t"
	}
	lr := ledger.Record{Target: target, Result: r.result, Extra: map[string]json.RawMessage{}}
	if ledger.Productive(r.result) && !r.noGoalsCounts {
		p, tot := r.passing, r.total
		if tot == 0 {
			p, tot = 1, 1
		}
		lr.GoalsPassing, lr.GoalsTotal = &p, &tot
	}
	if r.gate != "" {
		lr.Gate = ledger.Value(r.gate)
	}
	for k, v := range map[string]string{"rung": r.rung, "item": r.item, "goal_digest": r.goalDigest} {
		if v != "" {
			lr.Extra[k] = ledger.Value(v)
		}
	}
	if r.aborted {
		lr.Extra["aborted"] = json.RawMessage("true")
	}
	if r.oscillations > 0 {
		lr.Extra["oscillations"] = ledger.Value(r.oscillations)
	}
	if len(r.failingAfter) > 0 {
		lr.Extra["failing"] = ledger.Value(r.failingAfter)
	}
	if b := r.before; b != nil {
		m := map[string]any{"goals_passing": b.passing, "goals_total": b.total}
		if len(b.failing) > 0 {
			m["failing"] = b.failing
		}
		lr.Extra["before"] = ledger.Value(m)
	}
	res, err := f.ledger.Record(lr)
	if err != nil {
		f.t.Fatal(err)
	}
	return res.Entry.Record.Cycle
}

// write puts a file in the working tree.
func (f *fxEnv) write(rel, text string) string {
	f.t.Helper()
	p := filepath.Join(f.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// exists reports whether a path is there.
func fxExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// fxAge sets a file's modification time to age before now.
func fxAge(t *testing.T, p string, now time.Time, age time.Duration) {
	t.Helper()
	if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
		t.Fatal(err)
	}
}

// fxEvent is a pure event for the rules that read []Event.
func fxEvent(cycle int, result string, at time.Time) Event {
	return Event{Cycle: cycle, ID: "id" + string(rune('a'+cycle%26)), Result: result, Time: at}
}

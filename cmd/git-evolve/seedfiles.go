package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
	"github.com/git-evolve/git-evolve/loop"
	"github.com/git-evolve/git-evolve/mirror"
)

// The seeds' local files (mirror): .agents/evolve/cycle-history.jsonl kept
// from the ledger after every command that read or wrote it, and
// .agents/evolve/fitness-latest.json after every measure, in a working tree
// with the seeds' layout (an .agents/evolve directory) or where git config
// evolve.historyFile is true (git evolve init --history-file).

// historyFileKey is the git config key that turns the seeds' files on
// (true, even without .agents/evolve) or off (false).
const historyFileKey = "evolve.historyFile"

// seedMirror is the seeds' files of repo's working tree, when they are
// kept there. Where neither .agents/evolve nor a history file written
// before is there, the answer is no without reading the configuration.
func seedMirror(repo *gitstore.Repo) (mirror.Mirror, bool) {
	m, maybe := seedLayout(repo)
	return m, maybe && seedFilesOn(repo, m)
}

// seedLayout is the seeds' files of repo's working tree, and whether they
// may be kept there (the configuration not read yet): false where neither
// .agents/evolve nor a history file written before is there.
func seedLayout(repo *gitstore.Repo) (mirror.Mirror, bool) {
	if repo == nil || repo.Bare() {
		return mirror.Mirror{}, false
	}
	top, err := repo.WorkTree()
	if err != nil {
		return mirror.Mirror{}, false
	}
	m := mirror.Mirror{Top: top, StateDir: filepath.Join(repo.GitDir(), "evolve"), Exclude: loop.ExcludePath(repo)}
	return m, m.Present() || m.Known()
}

// seedFilesOn reports whether the configuration keeps the seeds' files in
// m's working tree: evolve.historyFile, else the .agents/evolve directory.
func seedFilesOn(repo *gitstore.Repo, m mirror.Mirror) bool {
	present := m.Present()
	on, set, err := repo.ConfigBool(historyFileKey)
	if err != nil {
		return false
	}
	return set && on || !set && present
}

// keepSeedHistory brings the seeds' cycle-history.jsonl up to date after
// command, when it opened the ledger: written when the ledger, the journal
// or HEAD moved (a record, a finish, a sync, a fetch read), else left alone
// at the cost of reading a few refs. err is what the command returned.
func keepSeedHistory(e *env, command string, err error) {
	// Not in the hooks that git runs on every commit and push, nor in
	// completion: the next command does it. Not in a run's agent: the
	// driver keeps the file before each turn, and what a turn writes under
	// the git directory is the driver's to put back. Not after a run that
	// stopped because the repository's git directory is no longer where it
	// found it: another repository may be there.
	var re *loop.RunError
	switch name, _, _ := strings.Cut(command, " "); {
	case e.ledger == nil, name == "hook", name == "__complete", e.getenv("EVOLVE_RUN_ID") != "",
		errors.As(err, &re) && re.Lost:
		return
	}
	refreshSeedHistory(e, e.ledger.Ledger)
}

// refreshSeedHistory brings the history file of l's working tree up to
// date, saying on stderr what was kept of a file git-evolve had not
// written; a failure is a warning (the file is derived, the ledger is
// what counts).
func refreshSeedHistory(e *env, l *store.Ledger) {
	m, maybe := seedLayout(l.Repo())
	if !maybe {
		return
	}
	// Nothing moved: nothing to do, and no configuration to read.
	if fresh, err := m.Fresh(l); err == nil && fresh || !seedFilesOn(l.Repo(), m) {
		return
	}
	res, err := m.Refresh(l)
	if err != nil {
		fmt.Fprintf(e.stderr, "git-evolve: warning: %s was not brought up to date: %v\n", mirror.HistoryFile, err)
		return
	}
	reportRefresh(e, res)
}

// reportRefresh says on stderr what a refresh kept of a file git-evolve
// had not written, and that it did not write one git tracks.
func reportRefresh(e *env, res *mirror.Refreshed) {
	if res.Kept != "" {
		fmt.Fprintf(e.stderr, "git-evolve: notice: %s had lines git evolve did not write: it was written again from the ledger, and what it held is kept in %s\n",
			mirror.HistoryFile, displayPath(e, res.Kept))
		fmt.Fprintf(e.stderr, "git-evolve: hint: the file only mirrors the ledger: record cycles with git evolve record (scripts/evolve-log-cycle.sh), or bring the kept file's cycles in with git evolve import %s\n",
			displayPath(e, res.Kept))
	}
	if res.Tracked {
		fmt.Fprintf(e.stderr, "git-evolve: warning: git tracks %s: it is not kept from the ledger (a cycle would commit it)\n", mirror.HistoryFile)
		fmt.Fprintf(e.stderr, "git-evolve: hint: git rm --cached %s, and commit: it is local, and git evolve keeps it out of git\n", mirror.HistoryFile)
	}
}

// keepSeedFitness writes the seeds' fitness-latest.json: the goals just
// measured, for cycle n from start (0 and zero outside a cycle).
func keepSeedFitness(e *env, repo *gitstore.Repo, s *goals.Snapshot, n int, start gitstore.Hash) {
	if s == nil {
		return
	}
	m, ok := seedMirror(repo)
	if !ok {
		return
	}
	f := mirror.Fitness{Cycle: n, Snapshot: s}
	if !start.IsZero() {
		f.CycleStartSHA = start.String()
	}
	if err := m.WriteFitness(mirror.FitnessFile, f); err != nil {
		fmt.Fprintf(e.stderr, "git-evolve: warning: %s was not written: %v\n", mirror.FitnessFile, err)
	}
}

// keepSeedFinish writes fitness-latest.json after a finish or a revert:
// the goals the gate measured when the cycle's work stays (improved, a
// later revert's), the goals of its start when it was reverted (the
// working tree is the start's again); nothing for an unchanged cycle.
func keepSeedFinish(e *env, repo *gitstore.Repo, res *cycle.FinishResult) {
	c := res.Cycle
	start, _ := gitstore.ParseHash(c.Start)
	switch {
	case res.After != nil:
		keepSeedFitness(e, repo, res.After, c.Cycle, start)
	case res.Verdict == nil || res.Verdict.After == nil:
	case res.Result == ledger.Regressed:
		var before goals.Snapshot
		if json.Unmarshal(c.Before, &before) == nil && before.Goals != nil {
			keepSeedFitness(e, repo, &before, c.Cycle, start)
		}
	default:
		keepSeedFitness(e, repo, res.Verdict.After, c.Cycle, start)
	}
}

// seedRunHooks are the run driver's hooks that keep the seeds' files in
// step with each cycle it starts and finishes, so that an agent reading
// them sees the ledger and the goals as they are.
func seedRunHooks(e *env, l *cycle.Ledger, o *loop.RunOptions) {
	o.OnStart = func(n int, start gitstore.Hash, measured *goals.Snapshot) {
		refreshSeedHistory(e, l.Ledger)
		keepSeedFitness(e, l.Repo(), measured, n, start)
	}
	o.OnFinish = func(res *cycle.FinishResult) {
		refreshSeedHistory(e, l.Ledger)
		keepSeedFinish(e, l.Repo(), res)
	}
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

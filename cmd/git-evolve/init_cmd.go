package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/git-evolve/git-evolve/agents"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/mirror"

	"github.com/git-evolve/git-evolve/loop"
	"github.com/git-evolve/git-evolve/setup"
)

type initCmd struct {
	NoHooks bool `name:"no-hooks" help:"Do not install the hooks (commit-msg, prepare-commit-msg, pre-push)."`
	// The seeds' local files, for loops that read them.
	// The agents' own sessions.
	Agent       []string `name:"agent" enum:"claude,codex,cursor,gemini" placeholder:"AGENT" help:"Also install, for this agent (claude, codex, cursor, gemini; repeat it for more), the git-evolve skill, the MCP server entry and the hooks that run the loop inside its own sessions (docs/agents.md)."`
	Remove      bool     `name:"remove" help:"With --agent: take out what --agent installed, and nothing else."`
	HistoryFile *bool    `name:"history-file" negatable:"" help:"Keep the seeds' .agents/evolve/cycle-history.jsonl (and fitness-latest.json) from the ledger in this worktree even without an .agents/evolve directory (git config evolve.historyFile true); --no-history-file: never, even with one (false)."`
}

func (initCmd) Help() string {
	return `Adds, where missing:
  notes.rewriteRef = refs/notes/evolv[e]  (amend and rebase carry records along)
  notes.displayRef = refs/notes/evolv[e]  (git log shows them)
      (a glob that matches the ledger alone: git warns about a missing
      exact ref until the first record, not about a glob)
  remote.<name>.fetch = refs/notes/evolve*:refs/notes/remotes/<name>/evolve*
                                         (for every remote: tracking copies only;
                                         a remote without a ledger still fetches)
It never writes a push refspec and never fetches straight into
refs/notes/evolve. It also trusts the GOALS.yaml (or GOALS.md) that is there (see git evolve
trust), and installs the hooks where git runs them (.git/hooks, or the
directory core.hooksPath names): commit-msg (the trailers of an open cycle)
and pre-push (the ledger goes with your git push, merged, and a ledger that
fails git evolve verify stops the push). A hook you already have is kept as
<name>.pre-evolve and runs first; a hook file git tracks in the repository is
never moved or edited, and nothing is written in a hooks directory git tracks:
then it prints the line to add yourself, and commit. Under a hook manager,
whose own reinstall rewrites the hooks, they go where it keeps and runs
them: husky 9's .husky/<name> scripts (commit them), lefthook's
lefthook-local.yml (kept out of git), pre-commit's <name>.legacy. status,
verify and the pre-push hook warn when one has gone missing. Running it again
changes nothing.

In a working tree with the seeds' .agents/evolve directory (AgentOps'
layout), git-evolve keeps .agents/evolve/cycle-history.jsonl as a local
mirror of the ledger (the records of the cycles HEAD reaches, and the
journal's) and .agents/evolve/fitness-latest.json after every measure, so that
the seeds' scripts and skills read the ledger's answers; --history-file keeps
them anywhere (git config evolve.historyFile true), --no-history-file nowhere.
They are never committed (info/exclude lists them) and never read as truth.

--agent claude|codex|cursor|gemini also installs, in the working tree, what
runs the loop inside that agent's own sessions (docs/agents.md): the
git-evolve skill (SKILL.md in the agent's skills folder: .claude/skills,
.agents/skills for Codex, .gemini/skills, .cursor/skills), the git-evolve MCP
server entry (.mcp.json, .codex/config.toml, .gemini/settings.json,
.cursor/mcp.json) and the hooks (.claude/settings.json, .codex/hooks.json,
.gemini/settings.json, .cursor/hooks.json): at session start the agent is told
git evolve status and the open cycle's brief; at a stop the open cycle is
finished through the judge and, while halt-check lets the loop go on, the next
cycle is opened and the agent told to continue with its brief; before a tool
runs, an edit of the goals file or under .git/ is denied during a cycle.
Claude Code also gets deny rules that keep it out of .git/evolve/. Settings
files are edited in place: every key, value and line of yours stays as it
was. What it created is kept in the git directory (evolve/agents/), and
--agent NAME --remove takes out exactly that. Commit the files to give the
loop to everyone who clones the repository.`
}

func (c initCmd) Run(e *env) error {
	if c.Remove && len(c.Agent) == 0 {
		return usagef("--remove goes with --agent NAME: the agent whose files to take out")
	}
	repo, err := e.Repo()
	if err != nil {
		return err
	}
	if len(c.Agent) > 0 && repo.Bare() {
		return usagef("--agent: a bare repository has no working tree for an agent's files")
	}
	if c.Remove {
		_, err := c.agentFiles(e, repo)
		return err
	}
	changes, err := setup.Init(repo)
	for _, c := range changes {
		fmt.Fprintf(e.stdout, "set %s\n", c)
	}
	if err != nil {
		return err
	}
	trusted, err := trustPresentGoals(e)
	if err != nil {
		return err
	}
	excluded := false
	if !repo.Bare() {
		if excluded, err = loop.ExcludeMarkers(loop.ExcludePath(repo)); err != nil {
			return err
		}
		if excluded {
			fmt.Fprintf(e.stdout, "kept the loop's markers (.agents/evolve/STOP, DORMANT, HANDOFF) out of git: %s\n", displayPath(e, loop.ExcludePath(repo)))
		}
	}
	var hooks []setup.HookChange
	if !c.NoHooks && !repo.Bare() {
		if hooks, err = setup.InstallHooks(repo); err != nil {
			return err
		}
		for _, h := range hooks {
			if h.Advice != "" {
				fmt.Fprintf(e.stderr, "git-evolve: hint: %s\n", h.Advice)
				continue
			}
			switch {
			case h.Manager != "":
				fmt.Fprintf(e.stdout, "installed the %s hook where %s runs it after its own reinstall: %s\n", h.Name, h.Manager, displayPath(e, h.Path))
				if h.Manager == "husky" {
					fmt.Fprintf(e.stderr, "git-evolve: hint: commit %s, so that every clone's husky runs it\n", displayPath(e, h.Path))
				}
			case h.Chained != "":
				fmt.Fprintf(e.stdout, "installed the %s hook: %s (your hook runs first, kept as %s)\n", h.Name, displayPath(e, h.Path), displayPath(e, h.Chained))
			case h.Updated:
				fmt.Fprintf(e.stdout, "updated the %s hook: %s\n", h.Name, displayPath(e, h.Path))
			default:
				fmt.Fprintf(e.stdout, "installed the %s hook: %s\n", h.Name, displayPath(e, h.Path))
			}
		}
		hooks = slices.DeleteFunc(hooks, func(h setup.HookChange) bool { return h.Advice != "" })
	}
	history, err := c.historyFile(e, repo)
	if err != nil {
		return err
	}
	agentChanged, err := c.agentFiles(e, repo)
	if err != nil {
		return err
	}
	if len(changes) == 0 && !trusted && !excluded && len(hooks) == 0 && !history && !agentChanged {
		fmt.Fprintln(e.stdout, "already initialised: nothing to change")
	}
	return nil
}

// trustPresentGoals trusts the goals file that is there when init runs
// (whoever runs init has the file in front of them), unless it is trusted
// already. It reports whether it trusted something.
func trustPresentGoals(e *env) (bool, error) {
	repo, err := e.Repo()
	if err != nil {
		return false, err
	}
	top, err := repo.WorkTree()
	if err != nil {
		return false, nil // bare: no goals file
	}
	path, _ := goals.Locate(top)
	name := filepath.Base(path)
	data, err := os.ReadFile(path)
	if err != nil {
		return false, nil
	}
	t := goals.TrustAt(stateDir(repo.CommonDir()))
	d := goals.DigestOf(name, data)
	if ok, err := t.Trusted(d); err != nil || ok {
		return false, err
	}
	if err := refuseWhileRunOwns(e, repo, "git evolve init's trust of "+name, "the goals file it runs with stays the one it trusted", true); err != nil {
		return false, err
	}
	if err := t.Add(d, name); err != nil {
		return false, err
	}
	fmt.Fprintf(e.stdout, "trusted %s (sha256 %s)\n", name, d[:12])
	if f, err := goals.Parse(name, data); err == nil && !f.Gate.Set {
		return true, trustGates(e)
	}
	return true, nil
}

// historyFile records --history-file or --no-history-file in git config
// and, when it is on, writes the history file now. It reports whether it
// changed anything.
func (c initCmd) historyFile(e *env, repo *gitstore.Repo) (bool, error) {
	if c.HistoryFile == nil {
		return false, nil
	}
	if repo.Bare() {
		return false, usagef("--history-file: a bare repository has no working tree to keep it in")
	}
	changed := false
	on, set, err := repo.ConfigBool(historyFileKey)
	if err != nil || !set || on != *c.HistoryFile {
		if err := repo.ConfigSet(historyFileKey, strconv.FormatBool(*c.HistoryFile)); err != nil {
			return false, err
		}
		fmt.Fprintf(e.stdout, "set %s = %t\n", historyFileKey, *c.HistoryFile)
		changed = true
	}
	if !*c.HistoryFile {
		return changed, nil
	}
	l, err := e.Ledger()
	if err != nil {
		return changed, err
	}
	m, _ := seedMirror(repo)
	res, err := m.Refresh(l)
	if err != nil {
		return changed, err
	}
	if res.Wrote {
		fmt.Fprintf(e.stdout, "wrote %s: %d record(s), the ledger's cycles that HEAD reaches and the journal's, kept out of git\n", mirror.HistoryFile, res.Lines)
		changed = true
	}
	reportRefresh(e, res)
	return changed, nil
}

// warnMissingHooks warns, once a command, of git-evolve's hooks that git
// would not run now (a hook manager's reinstall replaced them), but those
// known to run (the hook that asks); and of the commits the open cycle of
// this worktree made that lack its trailers (a hook did not run).
func warnMissingHooks(e *env, repo *gitstore.Repo, running []string) {
	warnUntrailered(e, repo)
	missing, err := setup.MissingHooks(repo)
	if err != nil {
		return
	}
	missing = slices.DeleteFunc(missing, func(n string) bool { return slices.Contains(running, n) })
	if len(missing) == 0 {
		return
	}
	fmt.Fprintf(e.stderr, "git-evolve: warning: git-evolve's %s hook(s) are not where git runs them (a hook manager installed again replaces what others wrote there): commits get no cycle trailers\n", strings.Join(missing, ", "))
	fmt.Fprintf(e.stderr, "git-evolve: hint: run git evolve init again: it puts them where the hook manager keeps them\n")
}

// warnUntrailered warns of the commits made since the open cycle started
// whose message has no Evolve-Id trailer.
func warnUntrailered(e *env, repo *gitstore.Repo) {
	l, err := e.Cycles()
	if err != nil {
		return
	}
	c, err := l.Current()
	if err != nil || c.Start == "" {
		return
	}
	if head, ok, err := repo.RefHash("HEAD"); err != nil || !ok || head.String() == c.Start {
		return // no commit yet: no git log to start
	}
	lacking, err := repo.LackingTrailer("Evolve-Id", c.Start+"..HEAD")
	if err != nil || len(lacking) == 0 {
		return
	}
	shorts := make([]string, len(lacking))
	for i, h := range lacking {
		shorts[i] = h.Short()
	}
	fmt.Fprintf(e.stderr, "git-evolve: warning: %d commit(s) made in the open cycle %d lack its trailers (%s): git-evolve's commit-msg hook did not run for them\n",
		len(lacking), c.Cycle, listSome(shorts, 5))
}

// agentFiles installs (or, with --remove, takes out) the agents' skill,
// MCP server entry and hooks in the working tree. It reports whether it
// changed anything.
func (c initCmd) agentFiles(e *env, repo *gitstore.Repo) (bool, error) {
	if len(c.Agent) == 0 {
		return false, nil
	}
	top, err := repo.WorkTree()
	if err != nil {
		return false, err
	}
	skill := agents.Skill(currentVersion().Version)
	changed := false
	for _, name := range c.Agent {
		a, err := agents.Lookup(name)
		if err != nil {
			return changed, usagef("--agent: %v", err)
		}
		// What init created, kept per worktree, so that --remove takes out
		// exactly that.
		recPath := filepath.Join(repo.GitDir(), "evolve", "agents", a.Name+".json")
		rec, err := readAgentRecord(recPath)
		if err != nil {
			return changed, err
		}
		var done []agents.Change
		if c.Remove {
			done, err = agents.Remove(top, a, skill, rec)
		} else {
			if rec == nil {
				rec = &agents.Record{}
			}
			done, err = agents.Install(top, a, skill, rec)
		}
		did := false
		for _, ch := range done {
			if ch.Hint {
				fmt.Fprintf(e.stderr, "git-evolve: hint: %s\n", termLine(ch.Message))
				continue
			}
			did = true
			fmt.Fprintf(e.stdout, "%s: %s\n", a.Title, termLine(ch.Message))
		}
		changed = changed || did
		if werr := writeAgentRecord(recPath, rec, c.Remove && err == nil); werr != nil && err == nil {
			err = werr
		}
		if err != nil {
			return changed, withHint(fmt.Errorf("%s: %w", a.Title, err), "what is said above was done; nothing else was changed")
		}
		if c.Remove && !did {
			fmt.Fprintf(e.stdout, "%s: nothing of git-evolve's to take out\n", a.Title)
		}
	}
	return changed, nil
}

// readAgentRecord reads what init --agent created (nil when it kept no
// record: a clone whose agent files came with the repository).
func readAgentRecord(path string) (*agents.Record, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec agents.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %v (remove it: --remove then takes out what it finds empty)", path, err)
	}
	return &rec, nil
}

// writeAgentRecord keeps rec at path, or removes it (gone: the agent's
// files were taken out).
func writeAgentRecord(path string, rec *agents.Record, gone bool) error {
	if gone {
		err := os.Remove(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if rec == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return loop.WriteAtomic(path, append(data, '\n'))
}

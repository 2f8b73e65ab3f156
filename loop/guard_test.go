package loop

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// gxRepo is a repository for the guard's tests: one commit, a commit-msg
// hook, an exclude file and a ledger with one record, all made with the
// git CLI.
func gxRepo(t *testing.T) (dir string, repo *gitstore.Repo) {
	t.Helper()
	dir = fxRepoDir(t, "guarded")
	gitDir := filepath.Join(dir, ".git")
	gxWrite(t, filepath.Join(gitDir, "hooks", "commit-msg"), "#!/bin/sh\nexec git-evolve hook commit-msg \"$@\"\n", 0o755)
	gxWrite(t, filepath.Join(gitDir, "info", "exclude"), ".agents/evolve/STOP\n", 0o644)
	fxGit(t, dir, "notes", "--ref=evolve", "add", "-m", `{"v":1,"id":"aaaaaaaaaaaaaaaaaaaa","cycle":1,"target":"t","result":"improved"}`, "HEAD")
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return dir, repo
}

// gxGuard takes the guard's snapshot before an agent's turn of cycle id.
func gxGuard(t *testing.T, repo *gitstore.Repo, id string) *turnGuard {
	t.Helper()
	g, err := guardTurn(repo, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// gxLinked adds the linked worktree side (branch side) to the repository
// at dir and opens it.
func gxLinked(t *testing.T, dir, side string) *gitstore.Repo {
	t.Helper()
	fxGit(t, dir, "worktree", "add", "-q", "-b", "side", side)
	repo, err := gitstore.Open(side)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return repo
}

// gxReplaceByLink moves path to moved and puts a link to target in its
// place, as an agent's turn can.
func gxReplaceByLink(t *testing.T, path, moved, target string) {
	t.Helper()
	if err := os.Rename(path, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

func gxWrite(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

func gxRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// gxRestore is g.restore() of a turn that leaves the worktree's .git as
// it was.
func gxRestore(t *testing.T, g *turnGuard) []string {
	t.Helper()
	marks, err := g.restore()
	if err != nil {
		t.Fatalf("restore: %v (marks %q)", err, marks)
	}
	return marks
}

// gxMarks checks that marks are exactly want, in any order.
func gxMarks(t *testing.T, marks []string, want ...string) {
	t.Helper()
	left := map[string]int{}
	for _, m := range marks {
		left[m]++
	}
	for _, w := range want {
		if left[w] == 0 {
			t.Errorf("no mark %q", w)
			continue
		}
		left[w]--
	}
	for m, n := range left {
		if n > 0 {
			t.Errorf("unexpected mark %q", m)
		}
	}
}

// A turn that changes nothing is marked with nothing.
func TestGuardNothingChanged(t *testing.T) {
	_, repo := gxRepo(t)
	g := gxGuard(t, repo, "cccccccccccccccccccc")
	if marks := gxRestore(t, g); len(marks) != 0 {
		t.Errorf("marks of a turn that changed nothing: %q", marks)
	}
}

// The config, the hooks and the info files the turn changed are put back,
// and the settings named.
func TestGuardConfigAndHooks(t *testing.T) {
	dir, repo := gxRepo(t)
	gitDir := filepath.Join(dir, ".git")
	hook := filepath.Join(gitDir, "hooks", "commit-msg")
	wantHook := gxRead(t, hook)
	wantConfig := gxRead(t, filepath.Join(gitDir, "config"))
	g := gxGuard(t, repo, "cccccccccccccccccccc")
	// the agent's turn
	fxGit(t, dir, "config", "core.hooksPath", "/dev/null")
	fxGit(t, dir, "config", "--unset", "core.bare")
	fxGit(t, dir, "config", "notes.rewriteRef", "refs/notes/other")
	gxWrite(t, hook, "#!/bin/sh\nexit 0\n", 0o755)
	gxWrite(t, filepath.Join(gitDir, "hooks", "pre-push"), "#!/bin/sh\nexit 0\n", 0o755)
	if err := os.Remove(filepath.Join(gitDir, "info", "exclude")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/null", filepath.Join(gitDir, "info", "attributes")); err != nil {
		t.Fatal(err)
	}
	marks := gxRestore(t, g)
	gxMarks(t, marks,
		"config: core.bare (false) removed, core.hooksPath set to /dev/null, notes.rewriteRef set to refs/notes/other during the agent's turn; put back",
		"hooks: commit-msg changed during the agent's turn; put back",
		"hooks: pre-push added during the agent's turn; removed",
		"info: attributes added during the agent's turn; removed",
		"info: exclude removed during the agent's turn; put back")
	if got := gxRead(t, hook); got != wantHook {
		t.Errorf("commit-msg after the turn: %q, want %q", got, wantHook)
	}
	if fi, err := os.Stat(hook); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("commit-msg's mode after the turn: %v, %v", fi.Mode(), err)
	}
	if got := gxRead(t, filepath.Join(gitDir, "config")); got != wantConfig {
		t.Errorf("config after the turn:\n%s\nwant\n%s", got, wantConfig)
	}
	for _, p := range []string{filepath.Join(gitDir, "hooks", "pre-push"), filepath.Join(gitDir, "info", "attributes")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", p, err)
		}
	}
	if got := gxRead(t, filepath.Join(gitDir, "info", "exclude")); got != ".agents/evolve/STOP\n" {
		t.Errorf("info/exclude after the turn: %q", got)
	}
}

// A hooks directory replaced by a link is made a directory again, never
// followed, its files put back.
func TestGuardDirReplacedByLink(t *testing.T) {
	dir, repo := gxRepo(t)
	hooks := filepath.Join(dir, ".git", "hooks")
	g := gxGuard(t, repo, "cccccccccccccccccccc")
	elsewhere := t.TempDir()
	if err := os.RemoveAll(hooks); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, hooks); err != nil {
		t.Fatal(err)
	}
	gxMarks(t, gxRestore(t, g), "hooks/: replaced by a symbolic link during the agent's turn; made a directory again, its files put back")
	if fi, err := os.Lstat(hooks); err != nil || !fi.IsDir() {
		t.Fatalf("hooks after the turn: %v, %v", fi, err)
	}
	if !fxExists(filepath.Join(hooks, "commit-msg")) {
		t.Error("commit-msg was not put back")
	}
	if des, _ := os.ReadDir(elsewhere); len(des) != 0 {
		t.Errorf("the link was followed: %d files written where it pointed", len(des))
	}
}

// Refs the turn made, moved or deleted under refs/notes/, refs/evolve/ and
// refs/replace/ are set back, the tips kept under refs/evolve/tampered/;
// the ledger's records are counted; a symbolic ref is never followed.
func TestGuardRefs(t *testing.T) {
	dir, repo := gxRepo(t)
	const id = "cccccccccccccccccccc"
	head := strings.TrimSpace(fxGit(t, dir, "rev-parse", "HEAD"))
	fxGit(t, dir, "update-ref", "refs/evolve/cycles/"+id+"/base", head)
	fxGit(t, dir, "update-ref", "refs/notes/evolve-fitness", strings.TrimSpace(fxGit(t, dir, "rev-parse", "refs/notes/evolve")))
	ledgerBefore := strings.TrimSpace(fxGit(t, dir, "rev-parse", "refs/notes/evolve"))
	g := gxGuard(t, repo, id)
	// the agent's turn
	fxGit(t, dir, "notes", "--ref=evolve", "append", "-m", `{"v":1,"id":"ffffffffffffffffffff","cycle":2,"target":"t","result":"improved"}`, "HEAD")
	forged := strings.TrimSpace(fxGit(t, dir, "rev-parse", "refs/notes/evolve"))
	fxGit(t, dir, "update-ref", "refs/notes/remotes/origin/evolve", forged)
	other := strings.TrimSpace(fxGit(t, dir, "commit-tree", "-m", "other", "HEAD^{tree}"))
	fxGit(t, dir, "update-ref", "refs/replace/"+head, other)
	fxGit(t, dir, "symbolic-ref", "refs/notes/evolve-control", "refs/heads/"+strings.TrimSpace(fxGit(t, dir, "branch", "--show-current")))
	fxGit(t, dir, "update-ref", "-d", "refs/evolve/cycles/"+id+"/base")
	fxGit(t, dir, "update-ref", "-d", "refs/notes/evolve-fitness")
	marks := gxRestore(t, g)
	short := forged[:7]
	gxMarks(t, marks,
		"ledger: 1 record written during the agent's turn, not by the driver (notes commit "+short+"); put back, kept under refs/evolve/tampered/"+id+"/notes/evolve",
		"ledger copy refs/notes/remotes/origin/evolve: 1 record written during the agent's turn, not by the driver (notes commit "+short+"); removed, kept under refs/evolve/tampered/"+id+"/notes/remotes/origin/evolve",
		"refs/notes/evolve-control: created during the agent's turn; removed, kept under refs/evolve/tampered/"+id+"/notes/evolve-control",
		"refs/replace/"+head+": created during the agent's turn; removed, kept under refs/evolve/tampered/"+id+"/replace/"+head,
		"refs/evolve/cycles/"+id+"/base: deleted during the agent's turn; put back",
		"refs/notes/evolve-fitness: deleted during the agent's turn; put back")
	for ref, want := range map[string]string{
		"refs/notes/evolve": ledgerBefore, "refs/evolve/cycles/" + id + "/base": head, "refs/notes/evolve-fitness": ledgerBefore,
		"refs/evolve/tampered/" + id + "/notes/evolve": forged, "refs/evolve/tampered/" + id + "/notes/remotes/origin/evolve": forged,
		"HEAD": head, "refs/notes/remotes/origin/evolve": "", "refs/replace/" + head: "", "refs/notes/evolve-control": "",
	} {
		got, _ := gxGitOut(dir, "rev-parse", "-q", "--verify", ref)
		if got != want {
			t.Errorf("%s at %q, want %q", ref, got, want)
		}
	}
}

func gxGitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// What other worktrees had under way when the turn began is theirs: the
// records, refs and lines of a cycle open there stay; the agent's do not.
func TestGuardOtherWorktreeCycle(t *testing.T) {
	dir, repo := gxRepo(t)
	const id, theirs = "cccccccccccccccccccc", "bbbbbbbbbbbbbbbbbbbb"
	gitDir := filepath.Join(dir, ".git")
	fxGit(t, dir, "worktree", "add", "-q", "-b", "side", filepath.Join(t.TempDir(), "side"))
	gxWrite(t, filepath.Join(gitDir, "worktrees", "side", "evolve", "cycle.json"), `{"cycle":2,"id":"`+theirs+`"}`, 0o644)
	reserved := filepath.Join(gitDir, "evolve", "reserved")
	gxWrite(t, reserved, "2 "+theirs+"\n", 0o644)
	head := strings.TrimSpace(fxGit(t, dir, "rev-parse", "HEAD"))
	g := gxGuard(t, repo, id)
	// the other worktree's cycle finishes: its record, its ref, its
	// number released
	side := strings.TrimSpace(fxGit(t, dir, "commit-tree", "-m", "side", "HEAD^{tree}"))
	fxGit(t, dir, "notes", "--ref=evolve", "add", "-m", `{"v":1,"id":"`+theirs+`","cycle":2,"target":"t","result":"improved"}`, side)
	theirLedger := strings.TrimSpace(fxGit(t, dir, "rev-parse", "refs/notes/evolve"))
	fxGit(t, dir, "update-ref", "refs/evolve/cycles/"+theirs+"/regressed", head)
	gxWrite(t, reserved, "", 0o644)
	// the agent's
	fxGit(t, dir, "update-ref", "refs/evolve/cycles/dddddddddddddddddddd/base", head)
	gxWrite(t, filepath.Join(gitDir, "evolve", "journal.jsonl"), `{"v":1,"id":"eeeeeeeeeeeeeeeeeeee","cycle":9,"result":"unchanged"}`+"\n", 0o644)
	marks := gxRestore(t, g)
	gxMarks(t, marks,
		"refs/evolve/cycles/dddddddddddddddddddd/base: created during the agent's turn; removed, kept under refs/evolve/tampered/"+id+"/evolve/cycles/dddddddddddddddddddd/base",
		"journal.jsonl: 1 line added during the agent's turn; removed")
	if got, _ := gxGitOut(dir, "rev-parse", "refs/notes/evolve"); got != theirLedger {
		t.Errorf("the ledger at %s, want the other worktree's record kept (%s)", got, theirLedger)
	}
	if got, _ := gxGitOut(dir, "rev-parse", "refs/evolve/cycles/"+theirs+"/regressed"); got != head {
		t.Errorf("the other cycle's save is at %q", got)
	}
	if got := gxRead(t, reserved); got != "" {
		t.Errorf("reserved after the turn: %q, want the number released", got)
	}
	if fxExists(filepath.Join(gitDir, "evolve", "journal.jsonl")) {
		t.Error("the journal the agent made is still there")
	}
}

// The run state is the driver's as it last wrote it; the derived caches
// that changed are removed, unnamed; verified stays when it names the
// ledger's tip, and is put back when it does not.
func TestGuardStateFiles(t *testing.T) {
	dir, repo := gxRepo(t)
	gitDir := filepath.Join(dir, ".git")
	runJSON := []byte("{\"id\": \"run\"}\n")
	gxWrite(t, RunStatePath(gitDir), string(runJSON), 0o644)
	view := filepath.Join(gitDir, "evolve", "ledger.view")
	gxWrite(t, view, "view", 0o644)
	brief := filepath.Join(gitDir, "evolve", "brief.md")
	gxWrite(t, brief, "the brief", 0o644)
	g, err := guardTurn(repo, "cccccccccccccccccccc", func() []byte { return runJSON })
	if err != nil {
		t.Fatal(err)
	}
	tip := strings.TrimSpace(fxGit(t, dir, "rev-parse", "refs/notes/evolve"))
	gxWrite(t, filepath.Join(gitDir, "evolve", "verified"), tip+"\n", 0o644) // a verify
	gxWrite(t, view, "other view", 0o644)
	gxWrite(t, filepath.Join(gitDir, "evolve", "merged"), "new", 0o644)
	// an answer that a remote's copy of the ledger may be read
	gxWrite(t, filepath.Join(gitDir, "evolve", "copies"), "git-evolve copies 1\n"+strings.Repeat("ab", 32)+" ok\n", 0o644)
	// what verify kept, with a list of the loose objects its answers
	// stand for made without one that was removed: the next verify would
	// trust them
	gxWrite(t, filepath.Join(gitDir, "evolve", "verify-kept"), "git-evolve verify kept\n", 0o644)
	// what the seeds' history file was written from, made to match one
	// the agent wrote
	gxWrite(t, filepath.Join(gitDir, "evolve", "history-mirror.json"), "{}\n", 0o644)
	gxWrite(t, RunStatePath(gitDir), `{"id": "run", "kept": {}}`, 0o644)
	gxWrite(t, brief, "a brief of my own", 0o644)
	gxMarks(t, gxRestore(t, g), "run.json: changed during the agent's turn; the driver wrote it again")
	if got := gxRead(t, RunStatePath(gitDir)); got != string(runJSON) {
		t.Errorf("run.json after the turn: %q", got)
	}
	if got := gxRead(t, brief); got != "the brief" {
		t.Errorf("brief.md after the turn: %q", got)
	}
	for _, name := range []string{"ledger.view", "merged", "copies", "verify-kept", "history-mirror.json"} {
		if fxExists(filepath.Join(gitDir, "evolve", name)) {
			t.Errorf("the cache %s changed and is still there", name)
		}
	}
	if got := gxRead(t, filepath.Join(gitDir, "evolve", "verified")); got != tip+"\n" {
		t.Errorf("verified after a verify in the turn: %q", got)
	}

	// one naming the tip, and what the next verify would trust without
	// reading: taken for its tip alone
	if g, err = guardTurn(repo, "cccccccccccccccccccc", func() []byte { return runJSON }); err != nil {
		t.Fatal(err)
	}
	gxWrite(t, filepath.Join(gitDir, "evolve", "verified"), tip+"\nreflog 999999 "+tip+"\nlargest 0\nchained no\n", 0o644)
	gxMarks(t, gxRestore(t, g))
	if got := gxRead(t, filepath.Join(gitDir, "evolve", "verified")); got != tip+"\n" {
		t.Errorf("verified after the turn: %q", got)
	}

	g, err = guardTurn(repo, "cccccccccccccccccccc", func() []byte { return runJSON })
	if err != nil {
		t.Fatal(err)
	}
	gxWrite(t, filepath.Join(gitDir, "evolve", "verified"), strings.Repeat("1", 40)+"\n", 0o644)
	gxMarks(t, gxRestore(t, g), "verified: set during the agent's turn to a tip the ledger does not descend from; put back")
	if got := gxRead(t, filepath.Join(gitDir, "evolve", "verified")); got != tip+"\n" {
		t.Errorf("verified after the turn: %q", got)
	}
}

// A ref in the way of the name the tip is kept under (the agent can make
// one under refs/evolve/tampered/) does not keep the ref from being put
// back: the tip is kept under a name no one could guess.
func TestGuardKeepNameTaken(t *testing.T) {
	dir, repo := gxRepo(t)
	const id = "cccccccccccccccccccc"
	before := strings.TrimSpace(fxGit(t, dir, "rev-parse", "refs/notes/evolve"))
	g := gxGuard(t, repo, id)
	fxGit(t, dir, "notes", "--ref=evolve", "append", "-m", `{"v":1,"id":"ffffffffffffffffffff","cycle":2}`, "HEAD")
	fxGit(t, dir, "update-ref", "refs/evolve/tampered/"+id+"/notes/evolve/in-the-way", before)
	marks := gxRestore(t, g)
	if len(marks) != 1 || !strings.Contains(marks[0], "; put back, kept under refs/evolve/tampered/"+id+"-") {
		t.Errorf("marks: %q", marks)
	}
	if got, _ := gxGitOut(dir, "rev-parse", "refs/notes/evolve"); got != before {
		t.Errorf("the ledger at %s, want %s", got, before)
	}
}

// A replace ref the turn made that replaces a commit by itself (a loop,
// which makes git refuse to read it) does not keep the refs from being
// put back.
func TestGuardReplaceLoop(t *testing.T) {
	dir, repo := gxRepo(t)
	const id = "cccccccccccccccccccc"
	head := strings.TrimSpace(fxGit(t, dir, "rev-parse", "HEAD"))
	fxGit(t, dir, "update-ref", "refs/evolve/cycles/"+id+"/base", head)
	g := gxGuard(t, repo, id)
	fxGit(t, dir, "update-ref", "refs/replace/"+head, head)
	fxGit(t, dir, "update-ref", "-d", "refs/evolve/cycles/"+id+"/base")
	gxMarks(t, gxRestore(t, g),
		"refs/replace/"+head+": created during the agent's turn; removed, kept under refs/evolve/tampered/"+id+"/replace/"+head,
		"refs/evolve/cycles/"+id+"/base: deleted during the agent's turn; put back")
	if got, _ := gxGitOut(dir, "rev-parse", "refs/evolve/cycles/"+id+"/base"); got != head {
		t.Errorf("the base at %q, want %s", got, head)
	}
}

// In a linked worktree, a turn that points the worktree's git directory at
// another repository (its commondir: another ledger, other refs) has it
// pointed back before anything else is compared, so that what the turn
// did to this repository's refs is still found and undone here.
func TestGuardWorktreeLinks(t *testing.T) {
	dir, _ := gxRepo(t)
	side := filepath.Join(t.TempDir(), "side")
	repo := gxLinked(t, dir, side)
	wtGitDir := filepath.Join(dir, ".git", "worktrees", "side")
	commondir := gxRead(t, filepath.Join(wtGitDir, "commondir"))
	g := gxGuard(t, repo, "cccccccccccccccccccc")
	other := fxRepoDir(t, "other")
	head := strings.TrimSpace(fxGit(t, side, "rev-parse", "HEAD"))
	fxGit(t, side, "update-ref", "refs/evolve/forged", head)
	gxWrite(t, filepath.Join(wtGitDir, "commondir"), filepath.Join(other, ".git")+"\n", 0o644)
	gxMarks(t, gxRestore(t, g),
		"commondir: changed during the agent's turn; put back",
		"refs/evolve/forged: created during the agent's turn; removed, kept under refs/evolve/tampered/cccccccccccccccccccc/evolve/forged")
	if got := gxRead(t, filepath.Join(wtGitDir, "commondir")); got != commondir {
		t.Errorf("commondir after the turn: %q, want %q", got, commondir)
	}
	if out := fxGit(t, dir, "for-each-ref", "refs/evolve/forged"); out != "" {
		t.Errorf("the ref the turn made is still there: %s", out)
	}
}

// The other end of the link: a linked worktree's .git file, which is in
// the working tree the agent edits. A turn that points it at another
// repository, replaces it by a link or removes it has it put back first,
// as it was, so that the git the operator (or the next run) starts in the
// worktree finds this repository.
func TestGuardWorktreeGitFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		turn func(t *testing.T, dotGit, other string)
	}{
		{"pointed at another repository", func(t *testing.T, dotGit, other string) {
			gxWrite(t, dotGit, "gitdir: "+filepath.Join(other, ".git")+"\n", 0o644)
		}},
		{"replaced by a link", func(t *testing.T, dotGit, other string) {
			if err := os.Remove(dotGit); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(other, ".git"), dotGit); err != nil {
				t.Fatal(err)
			}
		}},
		{"removed", func(t *testing.T, dotGit, other string) {
			if err := os.Remove(dotGit); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := gxRepo(t)
			side := filepath.Join(t.TempDir(), "side")
			repo := gxLinked(t, dir, side)
			dotGit := filepath.Join(side, ".git")
			want := gxRead(t, dotGit)
			g := gxGuard(t, repo, "cccccccccccccccccccc")
			other := fxRepoDir(t, "other")
			tc.turn(t, dotGit, other)
			gxMarks(t, gxRestore(t, g), ".git: changed during the agent's turn; put back")
			fi, err := os.Lstat(dotGit)
			if err != nil {
				t.Fatal(err)
			}
			if !fi.Mode().IsRegular() {
				t.Fatalf("the worktree's .git after the turn: %v, want a file", fi.Mode())
			}
			if got := gxRead(t, dotGit); got != want {
				t.Errorf("the worktree's .git after the turn: %q, want %q", got, want)
			}
			if got, want := strings.TrimSpace(fxGit(t, side, "rev-parse", "--path-format=absolute", "--git-common-dir")), filepath.Join(dir, ".git"); resolved(got) != resolved(want) {
				t.Errorf("git in the worktree finds the repository at %s, want %s", got, want)
			}
		})
	}
}

// A linked worktree's .git replaced by a directory (a repository of the
// agent's) is not removed: the mark says it could not be put back, and the
// error stops the run; the rest is put back all the same, in this
// repository (the worktree's git directory is found without the file).
func TestGuardWorktreeGitFileDir(t *testing.T) {
	dir, _ := gxRepo(t)
	side := filepath.Join(t.TempDir(), "side")
	repo := gxLinked(t, dir, side)
	g := gxGuard(t, repo, "cccccccccccccccccccc")
	head := strings.TrimSpace(fxGit(t, side, "rev-parse", "HEAD"))
	fxGit(t, side, "update-ref", "refs/evolve/forged", head)
	dotGit := filepath.Join(side, ".git")
	if err := os.Remove(dotGit); err != nil {
		t.Fatal(err)
	}
	fxGit(t, side, "init", "-q")
	marks, err := g.restore()
	gxMarks(t, marks,
		".git: changed during the agent's turn; could not be put back: a directory is in its place",
		"refs/evolve/forged: created during the agent's turn; removed, kept under refs/evolve/tampered/cccccccccccccccccccc/evolve/forged")
	var re *RunError
	if !errors.As(err, &re) || re.Lost || !strings.Contains(re.Msg, "the run stops") {
		t.Errorf("restore: %v, want a RunError that stops the run", err)
	}
	if !fxExists(filepath.Join(dotGit, "HEAD")) {
		t.Error("the repository the agent left at .git is gone")
	}
}

// The main worktree's .git is the git directory itself: a turn that moves
// it has it renamed back, what the agent left in its place going where the
// directory was moved to (nothing removed: it may be a repository), before
// anything else is compared, so that the rest is found and put back in
// this repository.
func TestGuardMainGitDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a moved directory is found through /proc/self/fd")
	}
	for _, tc := range []struct {
		name, mark string
		left       func(t *testing.T, dotGit, moved string) // what the agent leaves at .git
		check      func(t *testing.T, moved string)         // what is at moved after
	}{
		{"moved", ".git: moved to ../moved.git during the agent's turn; put back",
			func(*testing.T, string, string) {},
			func(t *testing.T, moved string) {
				if fxExists(moved) {
					t.Errorf("%s is still there", moved)
				}
			}},
		{"a file in its place", ".git: moved to ../moved.git and replaced by a file during the agent's turn; put back, the file moved to ../moved.git",
			func(t *testing.T, dotGit, _ string) {
				gxWrite(t, dotGit, "gitdir: /elsewhere/.git\n", 0o644)
			},
			func(t *testing.T, moved string) {
				if got := gxRead(t, moved); got != "gitdir: /elsewhere/.git\n" {
					t.Errorf("what the agent left at .git, at %s after the turn: %q", moved, got)
				}
			}},
		{"a repository in its place", ".git: moved to ../moved.git and replaced by a directory during the agent's turn; put back, the directory moved to ../moved.git",
			func(t *testing.T, dotGit, _ string) {
				fxGit(t, filepath.Dir(dotGit), "init", "-q")
			},
			func(t *testing.T, moved string) {
				if !fxExists(filepath.Join(moved, "HEAD")) {
					t.Errorf("the repository the agent left at .git is not at %s", moved)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, repo := gxRepo(t)
			dotGit := filepath.Join(dir, ".git")
			moved := filepath.Join(filepath.Dir(dir), "moved.git")
			before, err := os.Lstat(dotGit)
			if err != nil {
				t.Fatal(err)
			}
			g := gxGuard(t, repo, "cccccccccccccccccccc")
			head := strings.TrimSpace(fxGit(t, dir, "rev-parse", "HEAD"))
			fxGit(t, dir, "update-ref", "refs/evolve/forged", head)
			if err := os.Rename(dotGit, moved); err != nil {
				t.Fatal(err)
			}
			tc.left(t, dotGit, moved)
			gxMarks(t, gxRestore(t, g), tc.mark,
				"refs/evolve/forged: created during the agent's turn; removed, kept under refs/evolve/tampered/cccccccccccccccccccc/evolve/forged")
			if fi, err := os.Lstat(dotGit); err != nil || !os.SameFile(fi, before) {
				t.Fatalf("the git directory is not back at .git (%v)", err)
			}
			if out := fxGit(t, dir, "for-each-ref", "refs/evolve/forged"); out != "" {
				t.Errorf("the ref the turn made is still there: %s", out)
			}
			tc.check(t, moved)
		})
	}
}

// A main worktree's git directory that cannot be put back (removed, or
// where it cannot be renamed from) stops the run before anything else is
// compared: every path under .git leads elsewhere. What the agent left
// there stays.
func TestGuardMainGitDirLost(t *testing.T) {
	dir, repo := gxRepo(t)
	dotGit := filepath.Join(dir, ".git")
	g := gxGuard(t, repo, "cccccccccccccccccccc")
	if err := os.RemoveAll(dotGit); err != nil {
		t.Fatal(err)
	}
	gxWrite(t, filepath.Join(dotGit, "evolve", "journal.jsonl"), "the agent's\n", 0o644)
	marks, err := g.restore()
	gxMarks(t, marks, ".git: moved or removed and replaced by a directory during the agent's turn; could not be put back: it is not found")
	var re *RunError
	if !errors.As(err, &re) || !re.Lost || !strings.Contains(re.Msg, "the run stops") {
		t.Errorf("restore: %v, want a RunError of a repository lost", err)
	}
	if got := gxRead(t, filepath.Join(dotGit, "evolve", "journal.jsonl")); got != "the agent's\n" {
		t.Errorf("what the agent left at .git was changed: %q", got)
	}
}

// A linked worktree's git directories are outside its working tree, but
// within the agent's reach (its .git file and commondir name them): a
// turn that moves the repository's git directory away and puts a copy in
// its place would have every git the driver starts after it (GIT_DIR is
// the worktree's git directory, under the common one) work in the copy.
// The directories are put back as the main worktree's .git is, the copy
// going where the repository was moved to, before anything is compared.
func TestGuardLinkedGitDirsMoved(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a moved directory is found through /proc/self/fd")
	}
	for _, tc := range []struct {
		name string
		move func(dir string) string // the directory moved, under dir's parent
	}{
		{"the common git directory", func(dir string) string { return filepath.Join(dir, ".git") }},
		{"the worktree's git directory", func(dir string) string { return filepath.Join(dir, ".git", "worktrees", "side") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := gxRepo(t)
			side := filepath.Join(t.TempDir(), "side")
			repo := gxLinked(t, dir, side)
			from := tc.move(dir)
			before, err := os.Lstat(from)
			if err != nil {
				t.Fatal(err)
			}
			g := gxGuard(t, repo, "cccccccccccccccccccc")
			head := strings.TrimSpace(fxGit(t, side, "rev-parse", "HEAD"))
			fxGit(t, side, "update-ref", "refs/evolve/forged", head)
			moved := filepath.Join(t.TempDir(), "moved")
			if err := os.Rename(from, moved); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("cp", "-a", moved, from).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v: %s", err, out)
			}
			gxWrite(t, filepath.Join(from, "agent-was-here"), "mine\n", 0o644)
			marks, err := g.restore()
			if err != nil {
				t.Fatalf("restore: %v (marks %q)", err, marks)
			}
			if fi, err := os.Lstat(from); err != nil || !os.SameFile(fi, before) {
				t.Fatalf("%s is not back (%v); marks %q", from, err, marks)
			}
			if !fxExists(filepath.Join(moved, "agent-was-here")) {
				t.Errorf("the copy the agent left is not where the directory was moved to")
			}
			if out := fxGit(t, dir, "for-each-ref", "refs/evolve/forged"); out != "" {
				t.Errorf("the ref the turn made is still there: %s", out)
			}
			found := false
			for _, m := range marks {
				found = found || strings.Contains(m, "during the agent's turn; put back, the directory moved to")
			}
			if !found {
				t.Errorf("no mark names the move: %q", marks)
			}
		})
	}
}

// A turn that leaves the driver no repository it can find (its git
// directory removed, a repository of the agent's at .git) stops the run
// before the driver reads anything through .git: the marker watch's last
// look included, which asks the repository whether the operator resumed
// (a resume recorded lifts a STOP the agent removed). A STOP the agent
// removed is put back, whatever the agent's repository says.
func TestEndTurnLostReadsNoRepository(t *testing.T) {
	f := fxNew(t)
	m := Markers{Top: f.dir, ConfigDir: filepath.Join(t.TempDir(), "config")}
	stop := m.Path(Stop)
	if _, err := m.Write(Stop, "the operator's", 1, "op", time.Now().Add(-30*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	d := &driver{l: f.ledger, r: &RunState{ID: "run"}, gitDir: f.repo.GitDir(), now: time.Now, progress: func(string) {}}
	guard, err := guardTurn(f.repo, "cccccccccccccccccccc", nil)
	if err != nil {
		t.Fatal(err)
	}
	outside := watchOutside(f.ledger, f.dir)
	watch := watchMarkers(m, d.resumed(m), time.Hour)
	// The turn: a copy of the repository at .git, with a resume recorded,
	// the repository itself gone; the operator's STOP removed.
	dotGit := filepath.Join(f.dir, ".git")
	copied := filepath.Join(t.TempDir(), "copy.git")
	if out, err := exec.Command("cp", "-a", dotGit, copied).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	fxGit(t, f.dir, "--git-dir="+copied, "notes", "--ref=evolve-control", "add", "-m", `{"kind":"resume","at":"`+time.Now().UTC().Format(time.RFC3339)+`"}`, "HEAD")
	if err := os.RemoveAll(dotGit); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(copied, dotGit); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(stop); err != nil {
		t.Fatal(err)
	}
	_, removed, err := d.endTurn(guard, outside, watch, f.dir)
	var re *RunError
	if !errors.As(err, &re) || !re.Lost {
		t.Fatalf("endTurn: %v, want a RunError of a repository lost", err)
	}
	if !removed || !fxExists(stop) {
		t.Errorf("the STOP the agent removed is not put back (removed %v): the agent's repository was read", removed)
	}
}

// A turn that moves the working tree away and puts a link to another
// repository's working tree in its place has the worktree's .git lead into
// that repository: its git directory, or its .git file, is not the guard's
// to move or write. The guard puts back only in the directory its .git was
// in; the run stops, and the other repository is left as it was.
func TestGuardTopReplaced(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a moved directory is found through /proc/self/fd")
	}
	// the main worktree's top (dir) replaced by a link to another
	// repository's: the repository is lost, and the other one's git
	// directory stays where it is
	mainReplaced := func(t *testing.T, dir string, repo *gitstore.Repo) {
		t.Helper()
		other := fxRepoDir(t, "other")
		otherGit, err := os.Lstat(filepath.Join(other, ".git"))
		if err != nil {
			t.Fatal(err)
		}
		g := gxGuard(t, repo, "cccccccccccccccccccc")
		gxReplaceByLink(t, dir, dir+".moved", other)
		_, err = g.restore()
		var re *RunError
		if !errors.As(err, &re) || !re.Lost {
			t.Errorf("restore: %v, want a RunError of a repository lost", err)
		}
		if fi, err := os.Lstat(filepath.Join(other, ".git")); err != nil || !os.SameFile(fi, otherGit) {
			t.Errorf("the other repository's git directory was moved (%v)", err)
		}
	}
	t.Run("the main worktree", func(t *testing.T) {
		dir, repo := gxRepo(t)
		mainReplaced(t, dir, repo)
		if !fxExists(filepath.Join(dir+".moved", ".git", "HEAD")) {
			t.Errorf("the repository's git directory is not where the turn moved it")
		}
	})
	t.Run("a linked worktree", func(t *testing.T) {
		dir, _ := gxRepo(t)
		side := filepath.Join(t.TempDir(), "side")
		repo := gxLinked(t, dir, side)
		other := fxRepoDir(t, "other")
		otherSide := filepath.Join(t.TempDir(), "other-side")
		fxGit(t, other, "worktree", "add", "-q", "-b", "side", otherSide)
		want := gxRead(t, filepath.Join(otherSide, ".git"))
		g := gxGuard(t, repo, "cccccccccccccccccccc")
		gxReplaceByLink(t, side, side+".moved", otherSide)
		_, err := g.restore()
		var re *RunError
		if !errors.As(err, &re) || !strings.Contains(re.Msg, "the run stops") {
			t.Errorf("restore: %v, want a RunError that stops the run", err)
		}
		if got := gxRead(t, filepath.Join(otherSide, ".git")); got != want {
			t.Errorf("the other worktree's .git was written: %q, want %q", got, want)
		}
	})
	t.Run("the main worktree of a linked one", func(t *testing.T) {
		dir, _ := gxRepo(t)
		side := filepath.Join(t.TempDir(), "side")
		mainReplaced(t, dir, gxLinked(t, dir, side))
	})
}

// A turn that replaces the working tree by a link to another repository's
// stops the run (Lost), and the marker watch's last look writes nothing
// through the link: the STOP it finds missing there is the other working
// tree's to have or not.
func TestEndTurnTopReplacedWritesNoMarker(t *testing.T) {
	f := fxNew(t)
	m := Markers{Top: f.dir, ConfigDir: filepath.Join(t.TempDir(), "config")}
	if _, err := m.Write(Stop, "the operator's", 1, "op", time.Now().Add(-30*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	d := &driver{l: f.ledger, r: &RunState{ID: "run"}, gitDir: f.repo.GitDir(), now: time.Now, progress: func(string) {}}
	guard, err := guardTurn(f.repo, "cccccccccccccccccccc", nil)
	if err != nil {
		t.Fatal(err)
	}
	outside := watchOutside(f.ledger, f.dir)
	watch := watchMarkers(m, func() bool { return false }, time.Hour)
	other := fxRepoDir(t, "other")
	gxReplaceByLink(t, f.dir, f.dir+".moved", other)
	_, _, err = d.endTurn(guard, outside, watch, f.dir)
	var re *RunError
	if !errors.As(err, &re) || !re.Lost {
		t.Fatalf("endTurn: %v, want a RunError of a repository lost", err)
	}
	if fxExists(filepath.Join(other, ".agents")) {
		t.Error("the marker watch wrote into the other repository's working tree")
	}
	if !fxExists(filepath.Join(f.dir+".moved", ".agents", "evolve", "STOP")) {
		t.Error("the operator's STOP is not in the working tree where the turn moved it")
	}
}

// A git directory found where it cannot be renamed back from (inside what
// the agent put in its place) stops the run, and what else the turn
// changed in the repository is put back there, where it is, so that the
// repository the operator moves back is as the turn found it.
func TestGuardRestoreWhereFound(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a moved directory is found through /proc/self/fd")
	}
	dir, _ := gxRepo(t)
	side := filepath.Join(t.TempDir(), "side")
	repo := gxLinked(t, dir, side)
	g := gxGuard(t, repo, "cccccccccccccccccccc")
	defer g.close()
	head := strings.TrimSpace(fxGit(t, side, "rev-parse", "HEAD"))
	fxGit(t, side, "update-ref", "refs/evolve/forged", head)
	fxGit(t, side, "config", "core.hooksPath", "/dev/null")
	common := filepath.Join(dir, ".git")
	box := filepath.Join(t.TempDir(), "box")
	if err := os.Mkdir(box, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(common, filepath.Join(box, "real")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(box, common); err != nil {
		t.Fatal(err)
	}
	_, err := g.restoreLinks()
	var re *RunError
	if !errors.As(err, &re) || !re.Lost {
		t.Fatalf("restoreLinks: %v, want a RunError of a repository lost", err)
	}
	marks, gitDir, err := g.restoreWhereFound()
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(common, "real")
	if want := filepath.Join(real, "worktrees", "side"); gitDir != want {
		t.Errorf("the worktree's git directory found at %s, want %s", gitDir, want)
	}
	gxMarks(t, marks,
		"config: core.hooksPath set to /dev/null during the agent's turn; put back",
		"refs/evolve/forged: created during the agent's turn; removed, kept under refs/evolve/tampered/cccccccccccccccccccc/evolve/forged")
	if out, err := exec.Command("git", "--git-dir="+real, "config", "core.hooksPath").Output(); err == nil {
		t.Errorf("core.hooksPath is still set where the repository is: %s", out)
	}
	if out := fxGit(t, "", "--git-dir="+real, "for-each-ref", "refs/evolve/forged"); out != "" {
		t.Errorf("the ref the turn made is still there: %s", out)
	}
}

// Of the view's file, which every read may write a section of, a turn that
// changed some sections has those dropped and the others kept as they
// were: a read of the ledger in the turn does not cost the next verify
// what it kept. A file the turn left unreadable, or replaced by one of
// forged sections, keeps nothing the turn wrote.
func TestGuardViewSections(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a file's links are read on Linux alone: elsewhere the view's file is removed whole")
	}
	dir, repo := gxRepo(t)
	view := filepath.Join(dir, ".git", "evolve", "ledger.view")
	put := func(which []int, text string) {
		t.Helper()
		var parts [store.Sections]*store.Part
		for _, i := range which {
			parts[i] = &store.Part{Bytes: []byte(text + " " + store.SectionNames[i])}
		}
		if err := store.PutKept(view, nil, parts); err != nil {
			t.Fatal(err)
		}
	}
	all := []int{store.SecLines, store.SecMerged, store.SecCopies, store.SecState, store.SecKeys, store.SecDelta, store.SecObjects}
	sections := func() map[string]string {
		t.Helper()
		k := store.OpenKept(view)
		if k == nil {
			return nil
		}
		defer k.Release()
		out := map[string]string{}
		for i, name := range store.SectionNames {
			out[name] = string(k.Section(i))
		}
		return out
	}
	turn := func(during func()) map[string]string {
		t.Helper()
		put(all, "before")
		g, err := guardTurn(repo, "cccccccccccccccccccc", func() []byte { return nil })
		if err != nil {
			t.Fatal(err)
		}
		during()
		gxRestore(t, g)
		return sections()
	}
	// a read in the turn brought the lines forward and learned a merge
	got := turn(func() { put([]int{store.SecLines, store.SecMerged}, "during") })
	for _, name := range []string{"copies", "state", "keys", "delta", "objects"} {
		if got[name] != "before "+name {
			t.Errorf("after a turn that wrote the lines: %s is %q", name, got[name])
		}
	}
	if got["lines"] != "" || got["merged"] != "" {
		t.Errorf("after a turn that wrote the lines: lines %q, merged %q: kept", got["lines"], got["merged"])
	}
	// a forged state appended to the file
	got = turn(func() { put([]int{store.SecState}, "forged") })
	if got["state"] != "" || got["keys"] != "before keys" || got["lines"] != "before lines" {
		t.Errorf("after a turn that forged the state: %q", got)
	}
	// another file in its place, of the same sections: it is not the
	// file the sums were taken of (it may be linked from anywhere), and is
	// removed
	got = turn(func() {
		data, err := os.ReadFile(view)
		if err != nil {
			t.Fatal(err)
		}
		// (the old one kept aside, so that its inode is not the new one's)
		if err := os.Rename(view, view+".old"); err != nil {
			t.Fatal(err)
		}
		gxWrite(t, view, string(data), 0o600)
	})
	if got != nil || fxExists(view) {
		t.Errorf("after a turn that put another file in the view's place: %q", got)
	}
	// the file linked from elsewhere (a path of the agent's): what the
	// next write appends would land there; removed
	elsewhere := filepath.Join(dir, "linked.view")
	got = turn(func() {
		if err := os.Link(view, elsewhere); err != nil {
			t.Fatal(err)
		}
	})
	if got != nil || fxExists(view) {
		t.Errorf("after a turn that linked the view from elsewhere: %q", got)
	}
	// the file made unreadable: gone
	got = turn(func() { gxWrite(t, view, "not a view", 0o600) })
	if got != nil || fxExists(view) {
		t.Errorf("after a turn that made the view unreadable: %q, there %v", got, fxExists(view))
	}
}

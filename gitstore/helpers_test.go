package gitstore

// Shared helpers for the gitstore tests. Every test works on real
// repositories made with the git CLI in temporary directories; C git is the
// judge of what gitstore reads and writes.

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/git-evolve/git-evolve/internal/testenv"
)

const testNotesRef = "refs/notes/evolve"

// Fixed identities and dates for every git command the tests run.
const (
	testAuthorName     = "Ann Author"
	testAuthorEmail    = "ann@example.com"
	testAuthorDate     = "@1700000000 +0000"
	testCommitterName  = "Cal Committer"
	testCommitterEmail = "cal@example.com"
	testCommitterDate  = "@1700000000 +0000"
)

// testRoot holds HOME and the shared fixtures; TestMain removes it.
var testRoot string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "gitstore-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testRoot = d
	if err := os.MkdirAll(filepath.Join(d, "home"), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// no automatic maintenance after each commit, as in the other packages
	if err := os.WriteFile(filepath.Join(d, "home", ".gitconfig"), []byte(testenv.GlobalConfig), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// fixedEnv is what every git process in the tests sees (on top of the
// process environment with all GIT_* variables removed).
func fixedEnv() map[string]string {
	home := filepath.Join(testRoot, "home")
	return map[string]string{
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME":     testAuthorName,
		"GIT_AUTHOR_EMAIL":    testAuthorEmail,
		"GIT_AUTHOR_DATE":     testAuthorDate,
		"GIT_COMMITTER_NAME":  testCommitterName,
		"GIT_COMMITTER_EMAIL": testCommitterEmail,
		"GIT_COMMITTER_DATE":  testCommitterDate,
		"LC_ALL":              "C",
		"TZ":                  "UTC",
	}
}

// gitEnv is the environment of the git commands the tests run themselves.
func gitEnv(extra ...string) []string {
	var env []string
	fixed := fixedEnv()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") {
			continue
		}
		if _, ok := fixed[k]; ok {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range fixed {
		env = append(env, k+"="+v)
	}
	return append(env, extra...)
}

// setEnv makes the git processes that gitstore starts see the fixed test
// environment, and no other GIT_* variable.
func setEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") {
			t.Setenv(k, "") // restores the old value after the test
			os.Unsetenv(k)
		}
	}
	for k, v := range fixedEnv() {
		t.Setenv(k, v)
	}
}

// runGitCmd runs git in dir and returns its stdout, or an error carrying
// stderr.
func runGitCmd(dir, stdin string, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if env == nil {
		env = gitEnv()
	}
	cmd.Env = env
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

// testRepo is a repository the test made with the git CLI.
type testRepo struct {
	t   *testing.T
	dir string
}

// newRepo runs git init in a new temporary directory; extra arguments go to
// git init (for example "--bare").
func newRepo(t *testing.T, initArgs ...string) *testRepo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	args := append([]string{"init", "-q", "-b", "main"}, initArgs...)
	args = append(args, dir)
	if _, err := runGitCmd(t.TempDir(), "", nil, args...); err != nil {
		t.Fatal(err)
	}
	// gc.auto is 0 in the tests' global config (TestMain)
	return &testRepo{t: t, dir: dir}
}

// git runs git in the repository and fails the test if it fails.
func (r *testRepo) git(args ...string) string {
	r.t.Helper()
	out, err := runGitCmd(r.dir, "", nil, args...)
	if err != nil {
		r.t.Fatal(err)
	}
	return out
}

// gitIn is git with stdin.
func (r *testRepo) gitIn(stdin string, args ...string) string {
	r.t.Helper()
	out, err := runGitCmd(r.dir, stdin, nil, args...)
	if err != nil {
		r.t.Fatal(err)
	}
	return out
}

// gitErr runs git and returns its error instead of failing.
func (r *testRepo) gitErr(args ...string) (string, error) {
	return runGitCmd(r.dir, "", nil, args...)
}

// hash runs git and parses its trimmed output as an object name.
func (r *testRepo) hash(args ...string) Hash {
	r.t.Helper()
	return mustHash(r.t, strings.TrimSpace(r.git(args...)))
}

// open opens the repository with gitstore and closes it after the test.
func (r *testRepo) open() *Repo {
	r.t.Helper()
	return openDir(r.t, r.dir)
}

func openDir(t *testing.T, dir string) *Repo {
	t.Helper()
	repo, err := Open(dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { repo.Close() })
	return repo
}

func mustHash(t *testing.T, s string) Hash {
	t.Helper()
	h, err := ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// fakeObj is the name of an object that need not exist: git notes can
// annotate any object name.
func fakeObj(i int) Hash {
	return Hash(sha1.Sum([]byte(fmt.Sprintf("fake object %d", i))))
}

// fastImportCommits returns a fast-import stream of n commits on branch,
// each changing file.txt.
func fastImportCommits(branch string, first, n int) string {
	var b strings.Builder
	for i := first; i < first+n; i++ {
		msg := fmt.Sprintf("commit %d\n", i)
		content := fmt.Sprintf("content %d\n", i)
		fmt.Fprintf(&b, "commit refs/heads/%s\ncommitter %s <%s> %d +0000\ndata %d\n%s",
			branch, testCommitterName, testCommitterEmail, 1700000000+i, len(msg), msg)
		if i == first && first > 0 {
			fmt.Fprintf(&b, "from refs/heads/%s^0\n", branch)
		}
		fmt.Fprintf(&b, "M 100644 inline file.txt\ndata %d\n%s\n", len(content), content)
	}
	return b.String()
}

// makeCommits adds n commits to main with fast-import and returns them,
// oldest first.
func (r *testRepo) makeCommits(n int) []Hash {
	r.t.Helper()
	hs, err := makeCommitsIn(r.dir, n)
	if err != nil {
		r.t.Fatal(err)
	}
	return hs
}

func makeCommitsIn(dir string, n int) ([]Hash, error) {
	first := 0
	if out, err := runGitCmd(dir, "", nil, "rev-list", "--count", "main"); err == nil {
		fmt.Sscan(out, &first)
	}
	if _, err := runGitCmd(dir, fastImportCommits("main", first, n), nil, "fast-import", "--quiet"); err != nil {
		return nil, err
	}
	out, err := runGitCmd(dir, "", nil, "rev-list", "--reverse", "main")
	if err != nil {
		return nil, err
	}
	var hs []Hash
	for _, l := range strings.Fields(out) {
		h, err := ParseHash(l)
		if err != nil {
			return nil, err
		}
		hs = append(hs, h)
	}
	return hs[len(hs)-n:], nil
}

// notesList is `git notes --ref=<ref> list`: annotated object -> note blob.
func (r *testRepo) notesList(ref string) map[Hash]Hash {
	r.t.Helper()
	out := r.git("notes", "--ref="+ref, "list")
	m := map[Hash]Hash{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			r.t.Fatalf("git notes list printed %q", line)
		}
		m[mustHash(r.t, f[1])] = mustHash(r.t, f[0])
	}
	return m
}

// noteShow is `git notes --ref=evolve show <obj>`.
func (r *testRepo) noteShow(obj Hash) string {
	r.t.Helper()
	return r.git("notes", "--ref=evolve", "show", obj.String())
}

// lsEntry is one line of git ls-tree.
type lsEntry struct {
	mode, typ string
	hash      Hash
	path      string
}

func (r *testRepo) lsTree(args ...string) []lsEntry {
	r.t.Helper()
	out := r.git(append([]string{"ls-tree", "-z"}, args...)...)
	var es []lsEntry
	for _, rec := range strings.Split(out, "\x00") {
		if rec == "" {
			continue
		}
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			r.t.Fatalf("ls-tree printed %q", rec)
		}
		es = append(es, lsEntry{mode: f[0], typ: f[1], hash: mustHash(r.t, f[2]), path: path})
	}
	return es
}

// notePaths maps each annotated object to the paths of its notes in the
// tree, as git ls-tree -r lists them.
func (r *testRepo) notePaths(tree Hash) map[Hash][]string {
	r.t.Helper()
	m := map[Hash][]string{}
	for _, e := range r.lsTree("-r", tree.String()) {
		name := strings.ReplaceAll(e.path, "/", "")
		if h, err := ParseHash(name); err == nil && e.typ == "blob" {
			m[h] = append(m[h], e.path)
		}
	}
	return m
}

// treeSet is every tree object reachable from tree (itself included).
func (r *testRepo) treeSet(tree Hash) map[Hash]string {
	r.t.Helper()
	m := map[Hash]string{tree: ""}
	for _, e := range r.lsTree("-r", "-t", tree.String()) {
		if e.typ == "tree" {
			m[e.hash] = e.path
		}
	}
	return m
}

// fsckClean runs git fsck --strict and fails on any complaint.
func (r *testRepo) fsckClean() {
	r.t.Helper()
	cmd := exec.Command("git", "fsck", "--strict", "--no-dangling", "--no-progress")
	cmd.Dir = r.dir
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	var complaints []string
	for _, line := range strings.Split(string(out), "\n") {
		if line != "" && !strings.HasPrefix(line, "notice: ") {
			complaints = append(complaints, line)
		}
	}
	if err != nil || len(complaints) != 0 {
		r.t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

// copyRepo copies a fixture repository so that a test can write to it.
func copyRepo(t *testing.T, src string) *testRepo {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	return &testRepo{t: t, dir: dst}
}

// walkAll collects every note of a snapshot: object -> blobs in walk order.
func walkNotes(t *testing.T, n *Notes) map[Hash][]Hash {
	t.Helper()
	m := map[Hash][]Hash{}
	if err := n.Walk(func(obj, blob Hash) error {
		m[obj] = append(m[obj], blob)
		return nil
	}); err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return m
}

// single turns a walk result with one note per object into a map, failing on
// objects with more than one.
func singleNotes(t *testing.T, m map[Hash][]Hash) map[Hash]Hash {
	t.Helper()
	out := map[Hash]Hash{}
	for obj, bs := range m {
		if len(bs) != 1 {
			t.Fatalf("object %s has %d notes, want 1", obj, len(bs))
		}
		out[obj] = bs[0]
	}
	return out
}

func sameMap(a, b map[Hash]Hash) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// mapDiff describes how two maps differ, for failure messages.
func mapDiff(got, want map[Hash]Hash) string {
	var b strings.Builder
	n := 0
	for k, v := range want {
		if g, ok := got[k]; !ok {
			fmt.Fprintf(&b, "  missing %s\n", k)
			n++
		} else if g != v {
			fmt.Fprintf(&b, "  %s: got %s want %s\n", k, g, v)
			n++
		}
		if n > 10 {
			return b.String() + "  ...\n"
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "  unexpected %s\n", k)
			n++
		}
		if n > 10 {
			return b.String() + "  ...\n"
		}
	}
	return fmt.Sprintf("got %d want %d\n%s", len(got), len(want), b.String())
}

// identity returns the test signatures through gitstore.
func testIdentity(t *testing.T, repo *Repo) (Signature, Signature) {
	t.Helper()
	a, c, err := repo.Identity()
	if err != nil {
		t.Fatalf("Identity: %v", err)
	}
	return a, c
}

// writeNotes applies edits (content "" removes the note) and extras to snap,
// commits the result on ref and returns the new snapshot.
func mustWriteNotes(t *testing.T, repo *Repo, ref string, snap *Notes, edits map[Hash]string, extras map[string]Hash) *Notes {
	t.Helper()
	tree := mustApply(t, repo, snap, edits, extras)
	a, c := testIdentity(t, repo)
	next, err := snap.CommitNotes(ref, tree, "test write\n", a, c)
	if err != nil {
		t.Fatalf("CommitNotes: %v", err)
	}
	return next
}

// applyEdits writes the blobs of edits and returns ApplyNotes' tree.
func mustApply(t *testing.T, repo *Repo, snap *Notes, edits map[Hash]string, extras map[string]Hash) Hash {
	t.Helper()
	tree, err := snap.ApplyNotes(noteEdits(t, repo, edits), extras)
	if err != nil {
		t.Fatalf("ApplyNotes: %v", err)
	}
	return tree
}

func mustReadNotes(t *testing.T, repo *Repo, ref string) *Notes {
	t.Helper()
	n, err := repo.ReadNotes(ref)
	if err != nil {
		t.Fatalf("ReadNotes(%s): %v", ref, err)
	}
	return n
}

func blobText(t *testing.T, repo *Repo, h Hash) string {
	t.Helper()
	b, err := repo.ReadBlob(h)
	if err != nil {
		t.Fatalf("ReadBlob: %v", err)
	}
	return string(b)
}

func sortedHashes(hs []Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	sort.Strings(out)
	return out
}

// The shared fixture: 310 commits, the first 300 with a note added one by
// one by `git notes add` (so git chose the fanout as the tree grew). Tests
// that only read use it in place; tests that write copy it.
type notesFixture struct {
	dir     string
	commits []Hash
}

var (
	fixtureOnce sync.Once
	fixture     notesFixture
	fixtureErr  error
)

const (
	fixtureCommits = 310
	fixtureNotes   = 300
)

func gitNotesFixture(t *testing.T) notesFixture {
	t.Helper()
	fixtureOnce.Do(func() {
		fixtureErr = buildNotesFixture()
	})
	if fixtureErr != nil {
		t.Fatalf("building the notes fixture: %v", fixtureErr)
	}
	return fixture
}

func fixtureNote(i int) string { return fmt.Sprintf("note %d", i) }

func buildNotesFixture() error {
	dir := filepath.Join(testRoot, "notes300")
	if _, err := runGitCmd(testRoot, "", nil, "init", "-q", "-b", "main", dir); err != nil {
		return err
	}
	hs, err := makeCommitsIn(dir, fixtureCommits)
	if err != nil {
		return err
	}
	for i := 0; i < fixtureNotes; i++ {
		if _, err := runGitCmd(dir, "", nil, "notes", "--ref=evolve", "add", "-m", fixtureNote(i), hs[i].String()); err != nil {
			return err
		}
	}
	fixture = notesFixture{dir: dir, commits: hs}
	return nil
}

// testMarker is the ledger's non-note root entry (docs/data-model.md).
const testMarker = "evolve-ledger.json"

// checkGitSees checks that git lists exactly want (object -> content) on the
// ledger, reading the listed blobs with git cat-file.
func (r *testRepo) checkGitSees(want map[Hash]string) {
	r.t.Helper()
	list := r.notesList("evolve")
	contents := r.catBlobs(list)
	got := map[Hash]string{}
	for obj, blob := range list {
		got[obj] = contents[blob]
	}
	if len(got) != len(want) {
		r.t.Fatalf("git notes list has %d notes, want %d", len(got), len(want))
	}
	for obj, content := range want {
		if g, ok := got[obj]; !ok {
			r.t.Fatalf("git does not list the note on %s", obj)
		} else if g != content {
			r.t.Fatalf("git reads %q on %s, want %q", g, obj, content)
		}
	}
}

// catBlobs reads the blobs of a notes list with one git cat-file --batch.
func (r *testRepo) catBlobs(list map[Hash]Hash) map[Hash]string {
	r.t.Helper()
	var in strings.Builder
	var order []Hash
	for _, blob := range list {
		in.WriteString(blob.String() + "\n")
		order = append(order, blob)
	}
	out := map[Hash]string{}
	if len(order) == 0 {
		return out
	}
	raw := r.gitIn(in.String(), "cat-file", "--batch")
	for _, blob := range order {
		header, rest, ok := strings.Cut(raw, "\n")
		var name, typ string
		var size int
		if _, err := fmt.Sscanf(header, "%s %s %d", &name, &typ, &size); !ok || err != nil || name != blob.String() || len(rest) < size+1 {
			r.t.Fatalf("git cat-file --batch printed %q for %s", header, blob)
		}
		out[blob] = rest[:size]
		raw = rest[size+1:]
	}
	return out
}

// checkOnePath checks that no object is at two paths of tree.
func (r *testRepo) checkOnePath(tree Hash) map[Hash][]string {
	r.t.Helper()
	paths := r.notePaths(tree)
	for obj, ps := range paths {
		if len(ps) != 1 {
			r.t.Errorf("object %s is at %d paths: %v", obj, len(ps), ps)
		}
	}
	return paths
}

// fakeEdits sets notes on fakeObj(from) … fakeObj(to-1).
func fakeEdits(from, to int, format string) map[Hash]string {
	m := map[Hash]string{}
	for i := from; i < to; i++ {
		m[fakeObj(i)] = fmt.Sprintf(format, i)
	}
	return m
}

// mergeEdits overlays edit maps in order; "" deletes a note. Applied to a
// state it gives the state after the edits.
func mergeEdits(ms ...map[Hash]string) map[Hash]string {
	out := map[Hash]string{}
	for _, m := range ms {
		for k, v := range m {
			if v == "" {
				delete(out, k)
			} else {
				out[k] = v
			}
		}
	}
	return out
}

// makeMixedLedger points refs/notes/evolve at a hand-built tree that holds x
// twice, at its flat path and at its 2/38 path, and y once at 2/38.
func makeMixedLedger(t *testing.T, r *testRepo, x, y Hash) (flat, fan, yBlob Hash) {
	t.Helper()
	if x.String()[:2] == y.String()[:2] {
		t.Fatalf("premise: %s and %s share a bucket", x, y)
	}
	flat = mustHash(t, strings.TrimSpace(r.gitIn("flat copy\n", "hash-object", "-w", "--stdin")))
	fan = mustHash(t, strings.TrimSpace(r.gitIn("fanout copy\n", "hash-object", "-w", "--stdin")))
	yBlob = mustHash(t, strings.TrimSpace(r.gitIn("y note\n", "hash-object", "-w", "--stdin")))
	xs, ys := x.String(), y.String()
	subX := strings.TrimSpace(r.gitIn(fmt.Sprintf("100644 blob %s\t%s\n", fan, xs[2:]), "mktree"))
	subY := strings.TrimSpace(r.gitIn(fmt.Sprintf("100644 blob %s\t%s\n", yBlob, ys[2:]), "mktree"))
	root := strings.TrimSpace(r.gitIn(fmt.Sprintf("100644 blob %s\t%s\n040000 tree %s\t%s\n040000 tree %s\t%s\n",
		flat, xs, subX, xs[:2], subY, ys[:2]), "mktree"))
	c := strings.TrimSpace(r.git("commit-tree", "-m", "mixed fanout", root))
	r.git("update-ref", testNotesRef, c)
	return flat, fan, yBlob
}

// pickTwoBuckets returns two commits whose names start with different digits.
func pickTwoBuckets(t *testing.T, cs []Hash) (Hash, Hash) {
	t.Helper()
	for _, c := range cs[1:] {
		if c.String()[:2] != cs[0].String()[:2] {
			return cs[0], c
		}
	}
	t.Fatal("premise: all commits share a bucket")
	return ZeroHash, ZeroHash
}

// writeFile writes content to path, making its directories.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// noteEdits are edits (content "" removes the note) with their blobs
// written.
func noteEdits(t *testing.T, repo *Repo, edits map[Hash]string) []NoteEdit {
	t.Helper()
	var es []NoteEdit
	for obj, content := range edits {
		var blob Hash
		if content != "" {
			var err error
			if blob, err = repo.WriteBlob([]byte(content)); err != nil {
				t.Fatalf("WriteBlob: %v", err)
			}
		}
		es = append(es, NoteEdit{Object: obj, Blob: blob})
	}
	return es
}

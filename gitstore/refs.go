package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ErrRefChanged is returned by UpdateRef when the ref no longer holds the
// value the caller read: someone else moved it first. Read again and retry.
var ErrRefChanged = errors.New("ref changed since it was read")

// UpdateRef moves ref from old to new atomically with git's own lock
// protocol, so it is safe against other git-evolve processes and against C
// git. A zero old means the ref must not exist yet. It returns an error
// wrapping ErrRefChanged when the ref does not hold old any more. reason is
// the reflog message, unless Open prepared the update (ForWriting).
func (r *Repo) UpdateRef(ref string, newHash, old Hash, reason string) error {
	// With -z an empty old value means "do not check"; forty zeros, which
	// old.String() gives for ZeroHash, means "must not exist".
	input := fmt.Sprintf("update %s\x00%s\x00%s\x00", ref, newHash, old)
	p := r.refUpdate // started by ForWriting, with its own reflog message
	r.refUpdate = nil
	if p == nil {
		p = startGit(r.dir, r.env, true, "update-ref", "-z", "--stdin", "-m", reason)
	}
	_, err := p.finish([]byte(input))
	if err == nil {
		return nil
	}
	var ge *GitError
	switch {
	case errors.As(err, &ge) && isRefRace(ge.Stderr):
		return fmt.Errorf("updating %s: %w", ref, ErrRefChanged)
	case errors.As(err, &ge) && strings.Contains(ge.Stderr, ".lock': File exists"):
		return &LockedError{Ref: ref, Err: ge}
	}
	return fmt.Errorf("updating %s: %w", ref, err)
}

// ResetRef sets ref itself from old to newHash, never what a symbolic ref
// names: a symbolic ref is replaced by a plain one (or removed), and the
// ref it named is left as it is. A zero newHash removes ref; a zero old
// means ref must not exist. old is compared with what ref resolves to. It
// returns an error wrapping ErrRefChanged when ref does not hold old. For
// putting refs back as they were: a ref someone else made symbolic cannot
// make the reset move another.
func (r *Repo) ResetRef(ref string, newHash, old Hash, reason string) error {
	input := fmt.Sprintf("update %s\x00%s\x00%s\x00", ref, newHash, old)
	// Replace refs are not asked: what they say (a loop of them, even)
	// has no part in what a ref holds.
	_, err := startGit(r.dir, r.env, true, "--no-replace-objects", "update-ref", "--no-deref", "-z", "--stdin", "-m", reason).finish([]byte(input))
	if err == nil {
		return nil
	}
	var ge *GitError
	switch {
	case errors.As(err, &ge) && isRefRace(ge.Stderr):
		return fmt.Errorf("updating %s: %w", ref, ErrRefChanged)
	case errors.As(err, &ge) && strings.Contains(ge.Stderr, ".lock': File exists"):
		return &LockedError{Ref: ref, Err: ge}
	}
	return fmt.Errorf("updating %s: %w", ref, err)
}

// LockedError is a ref another process holds locked (git's <ref>.lock
// exists): briefly, while it writes, or for good when a git process died.
type LockedError struct {
	Ref string
	Err *GitError
}

func (e *LockedError) Error() string { return fmt.Sprintf("updating %s: %v", e.Ref, e.Err) }

func (e *LockedError) Unwrap() error { return e.Err }

// isRefRace recognises git's messages for a compare-and-swap that lost: the
// ref moved, or exists when it should not.
func isRefRace(stderr string) bool {
	return strings.Contains(stderr, "but expected") || strings.Contains(stderr, "reference already exists") ||
		strings.Contains(stderr, "unable to resolve reference") // deleted meanwhile
}

// RevisionError is returned when a revision does not name a commit.
type RevisionError struct {
	Rev    string
	Reason string
	// Missing is true when the revision names no object here at all (a
	// commit this clone does not have, or never had).
	Missing bool
}

func (e *RevisionError) Error() string { return fmt.Sprintf("%q %s", e.Rev, e.Reason) }

// ResolveCommits resolves each revision (a full or abbreviated name, a ref,
// HEAD~2, anything git accepts) to the commit it names, in one git process.
// It returns a *RevisionError for the first one that names no commit.
func (r *Repo) ResolveCommits(revs ...string) ([]Hash, error) {
	hashes, errs, err := r.LookupCommits(revs...)
	if err != nil {
		return nil, err
	}
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	return hashes, nil
}

// LookupCommits resolves every revision through the repository's git
// cat-file process and reports, for each, its commit or a *RevisionError
// saying why it names none. The error return is for git itself failing.
func (r *Repo) LookupCommits(revs ...string) ([]Hash, []error, error) {
	hashes := make([]Hash, len(revs))
	errs := make([]error, len(revs))
	done, err := r.lookupFullNames(revs, hashes)
	if err != nil {
		return nil, nil, err
	}
	for i, rev := range revs {
		if done[i] {
			continue
		}
		if rev == "" || strings.ContainsAny(rev, "\n\x00") || strings.HasPrefix(rev, "-") {
			errs[i] = &RevisionError{Rev: rev, Reason: "is not a revision"}
			continue
		}
		// A commit's full name, or HEAD (the default of most commands),
		// without starting git when the commit is read in-process (odb.go).
		h, err := ParseHash(rev)
		ok := err == nil && h.String() == rev
		if !ok && rev == "HEAD" {
			h, ok, err = r.RefHash("HEAD")
			ok = ok && err == nil
		}
		if ok {
			if typ, _, ok := r.nativeObject(h); ok && typ == commitType {
				hashes[i] = h
				continue
			}
		}
		h, _, _, err = r.object(rev + "^{commit}")
		var re *RevisionError
		switch {
		case err == nil:
			hashes[i] = h
			continue
		case errors.As(err, &re):
			re.Rev = rev
			errs[i] = re
			continue
		case !errors.Is(err, ErrObjectNotFound):
			return nil, nil, err
		}
		// Say what the revision names instead, if anything.
		_, typ, _, err := r.object(rev)
		switch {
		case err == nil:
			errs[i] = &RevisionError{Rev: rev, Reason: "names a " + string(typ) + ", not a commit"}
		case errors.Is(err, ErrObjectNotFound):
			errs[i] = &RevisionError{Rev: rev, Reason: "names no commit in this repository", Missing: true}
		case errors.As(err, &re):
			re.Rev = rev
			errs[i] = re
		default:
			return nil, nil, err
		}
	}
	return hashes, errs, nil
}

// RevList returns the commits git rev-list selects with args (a revision
// range such as main..topic, or several revisions), newest first.
func (r *Repo) RevList(args ...string) ([]Hash, error) {
	// Everything the user gave is a revision, never an option (such as
	// --output=FILE).
	// "--": a file named like a revision (HEAD at the top of the tree) is
	// not a path here.
	args = append(append([]string{"rev-list", "--end-of-options"}, args...), "--")
	out, err := r.git(context.Background(), nil, args...)
	if err != nil {
		return nil, err
	}
	var hashes []Hash
	for _, line := range strings.Fields(string(out)) {
		h, err := ParseHash(line)
		if err != nil {
			return nil, fmt.Errorf("git rev-list printed %q", line)
		}
		hashes = append(hashes, h)
	}
	return hashes, nil
}

// CheckRevisions says whether git takes args as revisions and ranges
// (main..topic, A...B, ^A, A^!), as rev-list would, without walking them:
// git rev-parse, which reads the names alone. A *RevisionError names what
// git refused, in git's words.
func (r *Repo) CheckRevisions(args ...string) error {
	if len(args) == 0 {
		return nil
	}
	_, err := r.git(context.Background(), nil, append(append([]string{"rev-parse", "--end-of-options"}, args...), "--")...)
	var ge *GitError
	if errors.As(err, &ge) {
		return &RevisionError{Rev: strings.Join(args, " "), Reason: "is not a revision or range git takes: " + strings.TrimPrefix(strings.TrimSpace(ge.Stderr), "fatal: ")}
	}
	return err
}

// FirstParents is the chain of first parents from tip: tip, its first
// parent, that one's, and so on, at most n of them, as git rev-list
// --first-parent lists them.
func (r *Repo) FirstParents(tip Hash, n int) ([]Hash, error) {
	out, err := r.git(context.Background(), nil, "rev-list", "--first-parent",
		"--max-count="+strconv.Itoa(n), "--end-of-options", tip.String(), "--")
	if err != nil {
		return nil, err
	}
	var hashes []Hash
	for _, line := range strings.Fields(string(out)) {
		h, err := ParseHash(line)
		if err != nil {
			return nil, fmt.Errorf("git rev-list printed %q", line)
		}
		hashes = append(hashes, h)
	}
	return hashes, nil
}

// lookupFullNames answers, when there are many revisions (an import's
// batch), those that are full names of commits, from their types in one
// exchange with git; done says which. The others (abbreviations, tags,
// names of nothing here, revisions) are for LookupCommits to ask one by
// one.
func (r *Repo) lookupFullNames(revs []string, hashes []Hash) (done []bool, err error) {
	done = make([]bool, len(revs))
	if len(revs) < lookupInOne {
		return done, nil
	}
	var at []int
	var hs []Hash
	for i, rev := range revs {
		if h, err := ParseHash(rev); err == nil && h.String() == rev {
			at = append(at, i)
			hs = append(hs, h)
		}
	}
	if len(hs) == 0 {
		return done, nil
	}
	types, err := r.ObjectTypes(hs)
	if err != nil {
		return nil, err
	}
	for k, i := range at {
		if types[k] == "commit" {
			hashes[i], done[i] = hs[k], true
		}
	}
	return done, nil
}

// lookupInOne is how many revisions LookupCommits takes before it asks
// for the types of the full names among them in one exchange.
const lookupInOne = 16

// RevListBoundary is RevList of one range that also returns its boundary:
// the commits the range excludes whose children it holds (git rev-list
// --boundary), where the range's first work started.
func (r *Repo) RevListBoundary(rng string) (commits, boundary []Hash, err error) {
	out, err := r.git(context.Background(), nil, "rev-list", "--boundary", "--end-of-options", rng, "--")
	if err != nil {
		return nil, nil, err
	}
	for _, line := range strings.Fields(string(out)) {
		h, err := ParseHash(strings.TrimPrefix(line, "-"))
		if err != nil {
			return nil, nil, fmt.Errorf("git rev-list printed %q", line)
		}
		if strings.HasPrefix(line, "-") {
			boundary = append(boundary, h)
		} else {
			commits = append(commits, h)
		}
	}
	return commits, boundary, nil
}

// RevListSince is the commits of from..to, and whether from is to's
// ancestor: it is exactly when it is on the range's boundary (from == to
// gives no commit and false). An ancestor found so is kept, for IsAncestor
// and MergeBase to answer without a walk (the push guard asks it of the
// ledger verify read the range of).
func (r *Repo) RevListSince(from, to Hash) (commits []Hash, descends bool, err error) {
	commits, boundary, err := r.RevListBoundary(from.String() + ".." + to.String())
	if err != nil {
		return nil, false, err
	}
	if descends = slices.Contains(boundary, from); descends {
		r.keepBase(from, to, mergeBase{base: from, ok: true})
	}
	return commits, descends, nil
}

// TrailerCommit is a commit and the values of the trailers asked for.
type TrailerCommit struct {
	Hash     Hash
	Subject  string
	Trailers map[string]string // key -> its last value in the commit's trailer block
}

// TrailerLog returns the commits git log selects with revs (HEAD when
// empty) whose trailer block has the trailer must, with the values of keys,
// newest first.
func (r *Repo) TrailerLog(must string, keys []string, revs ...string) (commits []TrailerCommit, err error) {
	format := "%H%x1f%s"
	for _, k := range keys {
		format += "%x1f%(trailers:key=" + k + ",valueonly,separator=%x1e)"
	}
	var memo string // HEAD's log is kept by HEAD's commit: a second reading asks git nothing
	if len(revs) == 0 {
		// A repository with no commit yet has no trailers to read (git
		// log would fail on the unborn HEAD).
		head, ok, err := r.RefHash("HEAD")
		if err != nil || !ok {
			return nil, err
		}
		memo = head.String() + "\x00" + must + "\x00" + format
		r.logsMu.Lock()
		kept, ok := r.logs[memo]
		r.logsMu.Unlock()
		if ok {
			return kept, nil
		}
		revs = []string{head.String()}
	}
	// git passes over the commits whose message does not name must at all
	// before formatting any (trailer keys are matched without case, as
	// git's trailer parsing does): what is formatted is then checked for
	// the trailer itself.
	args := append(append([]string{"log", "-z", "--format=" + format, "--regexp-ignore-case", "--fixed-strings",
		"--grep=" + must, "--end-of-options"}, revs...), "--")
	out, err := r.git(context.Background(), nil, args...)
	if err != nil {
		return nil, err
	}
	if memo != "" {
		defer func() {
			r.logsMu.Lock()
			defer r.logsMu.Unlock()
			if r.logs == nil {
				r.logs = map[string][]TrailerCommit{}
			}
			r.logs[memo] = commits
		}()
	}
	for _, rec := range strings.Split(string(out), "\x00") {
		f := strings.Split(strings.TrimPrefix(rec, "\n"), "\x1f")
		if len(f) != 2+len(keys) {
			continue
		}
		h, err := ParseHash(f[0])
		if err != nil {
			continue
		}
		c := TrailerCommit{Hash: h, Subject: f[1], Trailers: map[string]string{}}
		for i, k := range keys {
			vals := strings.Split(strings.TrimSpace(f[2+i]), "\x1e")
			if v := strings.TrimSpace(vals[len(vals)-1]); v != "" {
				c.Trailers[k] = v
			}
		}
		if c.Trailers[must] != "" {
			commits = append(commits, c)
		}
	}
	return commits, nil
}

// Mention is a commit whose message names cycles anywhere in it, not only
// in its trailer block: the squash commit of git merge --squash (the
// branch's messages, indented) or of a forge's squash and merge (listed).
type Mention struct {
	Hash Hash
	IDs  []string // the Evolve-Id values, in the message's order
}

// evolveIDLine is an Evolve-Id line anywhere in a message: indented, after a
// list marker, or as a trailer.
var evolveIDLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[\t ]*(?:[-*][\t ]+)?Evolve-Id:[\t ]*([0-9a-f]{20})[\t ]*$`)
})

// Mentions returns the commits git log selects with revs (HEAD when empty)
// whose message has an Evolve-Id line anywhere, newest first.
func (r *Repo) Mentions(revs ...string) ([]Mention, error) {
	if len(revs) == 0 {
		revs = []string{"HEAD"}
	}
	args := append(append([]string{"log", "-z", "--format=%H%x1f%B", "--grep=Evolve-Id:", "--end-of-options"}, revs...), "--")
	out, err := r.git(context.Background(), nil, args...)
	if err != nil {
		return nil, err
	}
	var ms []Mention
	for _, rec := range strings.Split(string(out), "\x00") {
		hash, body, ok := strings.Cut(strings.TrimPrefix(rec, "\n"), "\x1f")
		if !ok {
			continue
		}
		h, err := ParseHash(hash)
		if err != nil {
			continue
		}
		m := Mention{Hash: h}
		seen := map[string]bool{}
		for _, sub := range evolveIDLine().FindAllStringSubmatch(body, -1) {
			if !seen[sub[1]] {
				seen[sub[1]] = true
				m.IDs = append(m.IDs, sub[1])
			}
		}
		if len(m.IDs) > 0 {
			ms = append(ms, m)
		}
	}
	return ms, nil
}

// HeadBranch is the ref HEAD names (refs/heads/main, born or not), or ""
// when HEAD is detached: what git symbolic-ref -q HEAD prints, read from
// the worktree's HEAD.
func (r *Repo) HeadBranch() (string, error) {
	_, target, ok, err := r.readRef("HEAD")
	if err != nil || !ok {
		return "", err
	}
	return target, nil
}

// TrackingNotes lists the remote-tracking copies of a notes ref that this
// repository has: refs/notes/remotes/<remote>/<leaf> (leaf "evolve" for the
// ledger), loose or packed, with what each holds. It runs no git process.
func (r *Repo) TrackingNotes(leaf string) (map[string]Hash, error) {
	names := map[string]bool{}
	loose, err := filepath.Glob(filepath.Join(r.commonDir, "refs", "notes", "remotes", "*", leaf))
	if err != nil {
		return nil, err
	}
	for _, p := range loose {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			names["refs/notes/remotes/"+filepath.Base(filepath.Dir(p))+"/"+leaf] = true
		}
	}
	data, err := r.packedRefs()
	if err != nil {
		return nil, err
	}
	if data != nil {
		for _, line := range strings.Split(string(data), "\n") {
			_, name, ok := strings.Cut(line, " ")
			if !ok || !strings.HasPrefix(name, "refs/notes/remotes/") || !strings.HasSuffix(name, "/"+leaf) {
				continue
			}
			if mid := strings.TrimSuffix(strings.TrimPrefix(name, "refs/notes/remotes/"), "/"+leaf); mid != "" && !strings.Contains(mid, "/") {
				names[name] = true
			}
		}
	}
	out := map[string]Hash{}
	for name := range names {
		h, ok, err := r.RefHash(name)
		if err != nil {
			return nil, err
		}
		if ok {
			out[name] = h
		}
	}
	return out, nil
}

// HasRefsUnder reports whether any ref is under prefix (as
// "refs/replace/"), loose or packed, without running git: a caller that
// needs their values asks ListRefsUnder only when there are some.
func (r *Repo) HasRefsUnder(prefix string) (bool, error) {
	found := false
	err := filepath.WalkDir(filepath.Join(r.commonDir, filepath.FromSlash(prefix)), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil || found {
		return found, err
	}
	data, err := r.packedRefs()
	return bytes.Contains(data, []byte(" "+prefix)), err
}

// MissingInTree lists the objects of commit's tree, at any depth, that are
// not in the object store (git rev-list --objects --missing=print), with
// the path of each where git can tell it (a tree that is missing hides the
// paths below it). The commit itself must be here.
func (r *Repo) MissingInTree(commit Hash) (missing []Hash, paths map[Hash]string, err error) {
	out, err := r.git(context.Background(), nil, "rev-list", "--objects", "--missing=print", "--no-walk", "--end-of-options", commit.String(), "--")
	if err != nil {
		return nil, nil, err
	}
	paths = map[Hash]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "?"); ok {
			h, err := ParseHash(strings.TrimSpace(rest))
			if err != nil {
				return nil, nil, fmt.Errorf("git rev-list printed %q", line)
			}
			missing = append(missing, h)
		}
	}
	if len(missing) == 0 {
		return nil, paths, nil
	}
	// The paths of the missing entries, from the trees that are here.
	if out, err := r.git(context.Background(), nil, "ls-tree", "-r", "-t", "-z", "--full-tree", "--end-of-options", commit.String()); err == nil {
		for _, rec := range strings.Split(string(out), "\x00") {
			meta, path, ok := strings.Cut(rec, "\t")
			if f := strings.Fields(meta); ok && len(f) == 3 {
				if h, err := ParseHash(f[2]); err == nil && slices.Contains(missing, h) {
					paths[h] = path
				}
			}
		}
	}
	return missing, paths, nil
}

// Shared reports whether commit h is in the history of a ref other than
// the branch HEAD names: a remote-tracking branch (it was pushed, or
// fetched), a tag or another local branch. Rewriting a commit that is
// shared leaves the other refs on the old one; one only HEAD's branch holds
// can be rewritten as git commit --amend does. A detached HEAD names no
// branch: every branch counts.
func (r *Repo) Shared(h Hash) (bool, error) {
	branch, err := r.HeadBranch()
	if err != nil {
		return false, err
	}
	out, err := r.git(context.Background(), nil, "for-each-ref", "--contains", h.String(), "--format=%(refname)", "refs/heads/", "refs/remotes/", "refs/tags/")
	if err != nil {
		return false, err
	}
	for _, ref := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if ref != "" && ref != branch {
			return true, nil
		}
	}
	return false, nil
}

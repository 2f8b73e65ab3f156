package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
)

// Remotes and the network go through the git CLI, so that ssh, https and
// credential helpers work exactly as they do for the user's own git fetch
// and git push.

// FetchOptions are how Fetch fetches.
type FetchOptions struct {
	// Again says a fetch of the same refs ran before in this process:
	// git's automatic maintenance, which that one ran, is not run again.
	Again bool
}

// Fetch runs git fetch from remote with refspecs, without tags, without
// touching FETCH_HEAD, and pruning the destinations of the refspecs that
// the remote no longer has. In a partial clone the objects come whole
// (--no-filter): what git-evolve fetches it reads, and a read never
// fetches (GIT_NO_LAZY_FETCH).
func (r *Repo) Fetch(remote string, o FetchOptions, refspecs ...string) error {
	args := []string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--prune"}
	if o.Again {
		args = append(args, "--no-auto-maintenance")
	}
	if r.PartialClone() {
		args = append(args, "--no-filter")
	}
	args = append(append(args, "--end-of-options", remote), refspecs...)
	if _, err := r.gitUser(nil, args...); err != nil {
		return fmt.Errorf("fetching from %s: %w", remote, err)
	}
	return nil
}

// FetchObjects fetches the objects objs from remote, each with all it
// refers to (the notes a partial clone's filter left out), as git fetches
// what a partial clone lacks: by name, with no negotiation, into no ref.
func (r *Repo) FetchObjects(remote string, objs []Hash) error {
	if len(objs) == 0 {
		return nil
	}
	var in bytes.Buffer
	for _, h := range objs {
		in.WriteString(h.String() + "\n")
	}
	if _, err := r.gitUser(in.Bytes(), "-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
		"--recurse-submodules=no", "--no-auto-maintenance", "--no-filter", "--stdin", "--end-of-options", remote); err != nil {
		return fmt.Errorf("fetching %d object(s) from %s: %w", len(objs), remote, err)
	}
	return nil
}

// PartialClone says whether the repository is a partial clone: a remote
// promises objects its filter left out (remote.<name>.promisor, or
// extensions.partialClone), which git would fetch when one is read.
func (r *Repo) PartialClone() bool {
	r.readConfig()
	r.config.mu.Lock()
	defer r.config.mu.Unlock()
	if vs := r.config.all["extensions.partialclone"]; len(vs) > 0 && vs[len(vs)-1] != "" {
		return true
	}
	for k, vs := range r.config.all {
		if strings.HasPrefix(k, "remote.") && strings.HasSuffix(k, ".promisor") && len(vs) > 0 {
			if b, ok := configBool(vs[len(vs)-1]); ok && b {
				return true
			}
		}
	}
	return false
}

// ErrPromised is wrapped by the error of a read of an object a partial
// clone's filter left out: git, which may not fetch it for a read
// (GIT_NO_LAZY_FETCH), gives up the whole read.
var ErrPromised = errors.New("an object a partial clone's filter left out")

// Missing lists the objects of the history of tips, less that of not,
// that are not here (git rev-list --objects --missing=print): in a
// partial clone, those its filter left out.
func (r *Repo) Missing(tips, not []Hash) ([]Hash, error) {
	return r.missing(tips, not)
}

// MissingAt is Missing of the trees of the commits tips alone, not of
// their history: what a read of their notes as they are needs.
func (r *Repo) MissingAt(tips []Hash) ([]Hash, error) {
	return r.missing(tips, nil, "--no-walk")
}

func (r *Repo) missing(tips, not []Hash, flags ...string) ([]Hash, error) {
	if len(tips) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	for _, h := range tips {
		in.WriteString(h.String() + "\n")
	}
	for _, h := range not {
		in.WriteString("^" + h.String() + "\n")
	}
	args := append([]string{"rev-list", "--objects", "--missing=print"}, flags...)
	out, err := r.git(context.Background(), in.Bytes(), append(args, "--stdin")...)
	if err != nil {
		return nil, err
	}
	var missing []Hash
	for _, line := range bytes.Split(out, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("?")); ok {
			h, err := ParseHash(string(rest))
			if err != nil {
				return nil, fmt.Errorf("git rev-list printed %q", line)
			}
			missing = append(missing, h)
		}
	}
	return missing, nil
}

// PushUpdate is one ref a push sets on the remote, with a lease: the push
// of it is rejected unless the remote's ref still holds Expect (zero: the
// ref must not exist).
type PushUpdate struct {
	Local  Hash
	Remote string // the remote's ref
	Expect Hash
}

// PushResult is what the remote did with one update.
type PushResult struct {
	Ref      string
	Status   string // ok, new, up-to-date, rejected, error
	Reason   string // why it was rejected
	Rejected bool
}

// PushError is a push the remote did not take for a reason of its own (no
// right to push there, a hook that declined, the network): not a race
// another clone won.
type PushError struct{ Err error }

func (e *PushError) Error() string { return e.Err.Error() }
func (e *PushError) Unwrap() error { return e.Err }

// ErrPushRejected is wrapped by the error Push returns when the remote
// refused an update because its ref is not what the lease expected (another
// clone pushed first) or the update is not a fast-forward: fetch, merge and
// push again.
var ErrPushRejected = errors.New("the remote's ref moved since it was fetched")

// Push sends updates to remote in one git push, each with its lease, and
// never runs the repository's pre-push hook (the hook is what may call
// this). It returns each update's result; the error wraps ErrPushRejected
// when an update lost a race.
func (r *Repo) Push(remote string, updates []PushUpdate) ([]PushResult, error) {
	if len(updates) == 0 {
		return nil, nil
	}
	args := []string{"push", "--porcelain", "--no-verify"}
	for _, u := range updates {
		expect := u.Expect.String()
		if u.Expect.IsZero() {
			expect = ""
		}
		args = append(args, "--force-with-lease="+u.Remote+":"+expect)
	}
	args = append(args, "--end-of-options", remote)
	for _, u := range updates {
		args = append(args, u.Local.String()+":"+u.Remote)
	}
	out, err := r.gitUser(nil, args...)
	results := parsePushPorcelain(string(out))
	rejected := false
	for _, res := range results {
		rejected = rejected || res.Rejected
	}
	if rejected {
		return results, fmt.Errorf("pushing to %s: %w", remote, ErrPushRejected)
	}
	if err != nil {
		return results, fmt.Errorf("pushing to %s: %w", remote, &PushError{err})
	}
	return results, nil
}

// parsePushPorcelain reads git push --porcelain: a line a ref,
// "<flag>\t<from>:<to>\t<summary> (<reason>)".
func parsePushPorcelain(out string) []PushResult {
	var results []PushResult
	for _, line := range strings.Split(out, "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 || len(f[0]) != 1 {
			continue
		}
		_, to, _ := strings.Cut(f[1], ":")
		res := PushResult{Ref: to}
		summary := f[2]
		if i := strings.Index(summary, " ("); i >= 0 {
			res.Reason = strings.TrimSuffix(summary[i+2:], ")")
		}
		switch f[0] {
		case " ", "+":
			res.Status = "ok"
		case "*":
			res.Status = "new"
		case "=":
			res.Status = "up-to-date"
		case "!":
			res.Status = "rejected"
			// A refusal is a race (the lease, the ref moved, another push
			// took the ref or its lock first) unless the remote's
			// receive-pack gave one of its own fixed reasons for a refusal
			// that trying again cannot change (a hook declined, ...): those
			// come untranslated, where a lost race's reason is in the
			// remote's language.
			res.Rejected = (strings.HasPrefix(summary, "[rejected]") || strings.HasPrefix(summary, "[remote rejected]")) &&
				!permanentRefusal(res.Reason)
			if !res.Rejected {
				res.Status = "error"
			}
		default:
			res.Status = "error"
		}
		results = append(results, res)
	}
	return results
}

// permanentRefusals are reasons git's receive-pack gives, untranslated,
// for refusing an update whatever the ref holds.
var permanentRefusals = []string{"hook declined", "deny updating a hidden ref", "funny refname",
	"shallow update not allowed", "missing necessary objects", "unpacker error", "deletion prohibited",
	"branch is currently checked out", "deny deleting"}

func permanentRefusal(reason string) bool {
	for _, p := range permanentRefusals {
		if strings.Contains(reason, p) {
			return true
		}
	}
	return false
}

// ListRefs returns the refs under prefix (for example "refs/notes/evolve"
// matches refs/notes/evolve and refs/notes/evolve-fitness, and a prefix
// ending in "/", such as "refs/evolve/cycles/", every ref below it) and
// what they point at.
func (r *Repo) ListRefs(prefix string) (map[string]Hash, error) {
	return r.ListRefsUnder(prefix)
}

// ListRefsUnder is ListRefs for several prefixes at once: the refs under
// any of them, in one git for-each-ref.
func (r *Repo) ListRefsUnder(prefixes ...string) (map[string]Hash, error) {
	args := []string{"for-each-ref", "--format=%(objectname) %(refname)", "--end-of-options"}
	for _, prefix := range prefixes {
		pattern := prefix + "*" // a glob: it does not reach below a slash
		if strings.HasSuffix(prefix, "/") {
			pattern = prefix // git's prefix match: everything below
		}
		args = append(args, pattern)
	}
	out, err := r.git(context.Background(), nil, args...)
	if err != nil {
		return nil, err
	}
	refs := map[string]Hash{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		h, name, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		hash, err := ParseHash(h)
		if err != nil {
			continue
		}
		for _, prefix := range prefixes {
			if strings.HasPrefix(name, prefix) {
				refs[name] = hash
				break
			}
		}
	}
	return refs, nil
}

// RemoteRefs lists the refs of remote that match pattern (a git ls-remote
// pattern such as "refs/evolve/claims/*"), asking the remote.
func (r *Repo) RemoteRefs(remote, pattern string) (map[string]Hash, error) {
	out, err := r.gitUser(nil, "ls-remote", "--refs", "--end-of-options", remote, pattern)
	if err != nil {
		return nil, fmt.Errorf("listing %s on %s: %w", pattern, remote, err)
	}
	refs := map[string]Hash{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		h, name, ok := strings.Cut(line, "\t")
		if hash, err := ParseHash(h); ok && err == nil {
			refs[name] = hash
		}
	}
	return refs, nil
}

// MergeBase returns the best common ancestor of two commits; ok is false
// when they have none. Commits do not change, so the answer is kept: a
// second question about the same two commits (either way round, or whether
// one is the other's ancestor) asks git nothing.
func (r *Repo) MergeBase(a, b Hash) (Hash, bool, error) {
	if mb, ok := r.knownBase(a, b); ok {
		return mb.base, mb.ok, nil
	}
	out, err := r.git(context.Background(), nil, "merge-base", a.String(), b.String())
	var ge *GitError
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		r.keepBase(a, b, mergeBase{})
		return ZeroHash, false, nil
	}
	if err != nil {
		return ZeroHash, false, err
	}
	h, err := ParseHash(strings.TrimSpace(string(out)))
	if err != nil {
		return ZeroHash, false, err
	}
	r.keepBase(a, b, mergeBase{base: h, ok: true})
	return h, true, nil
}

// mergeBase is git's answer to git merge-base for a pair of commits.
type mergeBase struct {
	base Hash
	ok   bool // false: the two have no common ancestor
}

func basePair(a, b Hash) [2]Hash {
	if bytes.Compare(a[:], b[:]) > 0 {
		a, b = b, a
	}
	return [2]Hash{a, b}
}

func (r *Repo) knownBase(a, b Hash) (mergeBase, bool) {
	r.basesMu.Lock()
	defer r.basesMu.Unlock()
	mb, ok := r.bases[basePair(a, b)]
	return mb, ok
}

func (r *Repo) keepBase(a, b Hash, mb mergeBase) {
	r.basesMu.Lock()
	defer r.basesMu.Unlock()
	if r.bases == nil {
		r.bases = map[[2]Hash]mergeBase{}
	}
	r.bases[basePair(a, b)] = mb
}

// UpstreamRemote is the remote of the current branch's upstream
// (branch.<name>.remote), or "" when there is none (a detached HEAD, a
// branch without upstream, or a local upstream).
func (r *Repo) UpstreamRemote() (string, error) {
	head, err := r.HeadBranch()
	if err != nil {
		return "", nil
	}
	return r.UpstreamRemoteOf(head)
}

// UpstreamRemoteOf is UpstreamRemote for branch (as HeadBranch gives it;
// "" for a detached HEAD), for a caller that knows the branch.
func (r *Repo) UpstreamRemoteOf(head string) (string, error) {
	if head == "" {
		return "", nil // detached
	}
	branch := strings.TrimPrefix(head, "refs/heads/")
	vals, err := r.ConfigGetAll("branch." + branch + ".remote")
	if err != nil || len(vals) == 0 || vals[len(vals)-1] == "." {
		return "", err
	}
	return vals[len(vals)-1], nil
}

// Upstream is the current branch's upstream, as git config names it: Ref
// is what git compares the branch with (refs/remotes/origin/main, or a
// local branch), Remote and RemoteRef where it comes from ("" for a local
// upstream). The zero Upstream is none (a detached HEAD, no upstream).
type Upstream struct {
	Branch, Ref, Remote, RemoteRef string
}

// BranchUpstream is the current branch's upstream.
func (r *Repo) BranchUpstream() (Upstream, error) {
	branch, err := r.HeadBranch()
	if err != nil {
		return Upstream{}, err
	}
	return r.UpstreamOf(branch)
}

// UpstreamOf is branch's upstream (branch as HeadBranch gives it: "" is a
// detached HEAD, which has none), for a caller that knows the branch.
func (r *Repo) UpstreamOf(branch string) (Upstream, error) {
	if branch == "" {
		return Upstream{}, nil
	}
	out, err := r.git(context.Background(), nil, "for-each-ref", "--format=%(upstream)%00%(upstream:remotename)%00%(upstream:remoteref)", "--end-of-options", branch)
	if err != nil {
		return Upstream{}, err
	}
	f := strings.Split(strings.TrimSuffix(string(out), "\n"), "\x00")
	if len(f) != 3 || f[0] == "" {
		return Upstream{Branch: branch}, nil
	}
	u := Upstream{Branch: branch, Ref: f[0], Remote: f[1], RemoteRef: f[2]}
	if u.Remote == "." {
		u.Remote, u.RemoteRef = "", ""
	}
	return u, nil
}

// AheadBehind counts the commits of a that b lacks, and of b that a lacks.
func (r *Repo) AheadBehind(a, b string) (ahead, behind int, err error) {
	out, err := r.git(context.Background(), nil, "rev-list", "--left-right", "--count", "--end-of-options", a+"..."+b)
	if err != nil {
		return 0, 0, err
	}
	if _, err := fmt.Sscan(string(out), &ahead, &behind); err != nil {
		return 0, 0, fmt.Errorf("git rev-list --left-right --count: %q: %w", out, err)
	}
	return ahead, behind, nil
}

// FetchUpstream brings the upstream's remote-tracking ref up to date (a
// fetch of its one ref, which updates it as git fetch does), when it comes
// from a remote.
func (r *Repo) FetchUpstream(u Upstream) error {
	if u.Remote == "" || u.RemoteRef == "" {
		return nil
	}
	if _, err := r.gitUser(nil, "fetch", "--quiet", "--no-tags", "--end-of-options", u.Remote, u.RemoteRef); err != nil {
		return fmt.Errorf("fetching %s from %s: %w", u.RemoteRef, u.Remote, err)
	}
	return nil
}

// FastForward moves the current branch, its index and working tree to
// ref, as git merge --ff-only does (which refuses anything but a
// fast-forward, and to overwrite local changes).
func (r *Repo) FastForward(ref string) error {
	if _, err := r.gitUser(nil, "merge", "--ff-only", "--quiet", "--no-edit", "--end-of-options", ref); err != nil {
		return fmt.Errorf("fast-forwarding to %s: %w", ref, err)
	}
	return nil
}

// PushBranch runs a plain git push, as the user would: the remote, the
// refs and push.default are git's config to decide, and the pre-push hook
// runs (git evolve's delivers the ledger with the branch).
func (r *Repo) PushBranch() error {
	if _, err := r.gitUser(nil, "push", "--quiet"); err != nil {
		return fmt.Errorf("git push: %w", err)
	}
	return nil
}

// IsShallow reports whether the repository is a shallow clone (its history
// cut at some depth), as git rev-parse --is-shallow-repository says.
func (r *Repo) IsShallow() (bool, error) {
	out, err := r.git(context.Background(), nil, "rev-parse", "--is-shallow-repository")
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(out)) == "true", nil
}

// Package share keeps the evolve notes refs of clones in step: it fetches
// a remote's refs/notes/evolve* into refs/notes/remotes/<remote>/…, merges
// each into its local ref as a union (every record from either side, an
// identical one once, nothing dropped), and pushes the result with a lease
// on what was fetched, fetching and merging again when another clone
// pushed first. The network goes through the git CLI.
//
// A merge never removes a note or a line of one: a note the remote removed
// stays, and records that disagree (two records with one id, two clones'
// records with one cycle number) are all kept for verify to report.
package share

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// NotesPrefix is the prefix of the refs sync carries: the ledger
// (refs/notes/evolve) and its siblings (refs/notes/evolve-fitness, …).
const NotesPrefix = "refs/notes/evolve"

// LedgerRef is the ledger's notes ref.
const LedgerRef = "refs/notes/evolve"

// cycleIndex is the ledger's index of cycles in its notes tree, kept by a
// merge as by every writer of the ledger (ledger.IndexName).
var cycleIndex = &gitstore.NotesIndex{Name: ledger.IndexName, Keys: ledger.IndexKeys}

// TranscriptsPrefix is where the agents' transcripts are kept (a blob a
// cycle, under its id), and TranscriptsTracking where a remote's are
// fetched to. They are carried only when the options say so
// (evolve.shareTranscripts): never merged, never moved once there.
const TranscriptsPrefix = "refs/evolve/transcripts/"

// TranscriptsTracking is where remote's transcripts are fetched to.
func TranscriptsTracking(remote string) string {
	return "refs/evolve/remotes/" + remote + "/transcripts/"
}

// TrackingRef is where ref of remote is fetched to.
func TrackingRef(remote, ref string) string {
	return "refs/notes/remotes/" + remote + "/" + strings.TrimPrefix(ref, "refs/notes/")
}

// DefaultPatience is how long a sync goes on fetching, merging and pushing
// again while other clones push first.
const DefaultPatience = 2 * time.Minute

// GaveUpError is returned when a sync's pushes kept losing the race to
// other clones until its patience ran out. Nothing is lost: the local
// ledger holds everything merged so far; a later sync pushes it.
type GaveUpError struct {
	Remote   string
	Attempts int
	Elapsed  time.Duration
}

func (e *GaveUpError) Error() string {
	return fmt.Sprintf("gave up syncing with %s after %d attempts in %s: each time, another clone pushed its ledger between the fetch and the push (%v). Nothing is lost: the local ledger keeps what was merged; run git evolve sync again, or give it longer with --patience",
		e.Remote, e.Attempts, e.Elapsed.Round(time.Millisecond), gitstore.ErrPushRejected)
}

func (e *GaveUpError) Unwrap() error { return gitstore.ErrPushRejected }

// backoff is how long to wait before attempt (2 and on) after a lost race
// whose attempt took took: about as long as an attempt takes here (at
// least 20ms), doubling with each attempt up to 8 times that, the upper
// half jittered so that clones that lost together do not come back
// together. An attempt's length is the window in which another clone's push
// makes it lose: waiting for about that long lets the winner's push land
// and spreads the losers over the next windows, where a fixed short wait
// brings them all back into the same one.
func backoff(attempt int, took time.Duration) time.Duration {
	d := max(20*time.Millisecond, took) << min(attempt-2, 3)
	return d/2 + rand.N(d/2+1)
}

// Report is what a sync did.
type Report struct {
	Remote string
	Refs   []RefReport
	// Attempts is how many fetch-merge-push rounds it took (more than one
	// when another clone pushed in between).
	Attempts int
	// LeaseLosses counts the pushes refused because the remote's ref had
	// moved since it was fetched (another clone pushed first).
	LeaseLosses int
	// Elapsed is how long the sync took.
	Elapsed time.Duration
	// Transcripts counts the transcripts pushed (Options.Transcripts), in
	// every round.
	Transcripts int
}

// RefReport is what a sync did to one ref.
type RefReport struct {
	Ref string
	// Local is the local ref before the sync, Remote the remote's as
	// fetched, Result the local ref after (zero where there was none).
	Local, Remote, Result gitstore.Hash
	// Merged counts the notes the merge changed locally.
	Merged int
	// Pushed is true when the sync moved the remote's ref: to Result, or,
	// when a later round's push of it was refused, to an earlier round's.
	Pushed bool
	// Refused is true when Options.Admit kept the remote's ref out: the
	// local ref was not merged with it, nor pushed.
	Refused bool
}

// Options change what Sync does.
type Options struct {
	// Admit, when set, is asked about each fetched ref before it is merged
	// (remote is what was fetched, local the local ref): an error keeps
	// that ref out of the sync. The local ref stays as it is and is not
	// pushed; the other refs are synced; Sync returns the error.
	Admit func(ref string, local, remote gitstore.Hash) error
	// BeforePush, when set, is asked about each ref about to be pushed
	// (result is the local ref the push would deliver): an error stops
	// every push, and Sync returns it.
	BeforePush func(ref string, result gitstore.Hash) error
	// Patience is how long Sync goes on retrying while other clones push
	// first (0 is DefaultPatience); when it is up, Sync returns a
	// *GaveUpError.
	Patience time.Duration
	// now and sleep are the clock Patience is counted by (the tests' is
	// fake: a round's length is then theirs to say); nil: the real one.
	now   func() time.Time
	sleep func(time.Duration)
	// AsLastSeen starts with a round that does not fetch: the remote's
	// refs are taken to be what the remote-tracking refs say (as the last
	// fetch or push left them), and the push's lease holds the remote to
	// that. When the remote moved since, the lease refuses the push and a
	// round that fetches follows at once (not counted as a lost race).
	// What the remote brings is then asked of it as in any round: a push
	// of what the remote already has in part saves a fetch.
	AsLastSeen bool
	// Listed are the refs Delivered listed just before, which the first
	// round of AsLastSeen takes instead of listing them again (a push
	// guard's every push pays for each git it starts). A ref moved since
	// is pushed as listed, as when it moves during a round; the lease
	// holds the remote to the copies listed.
	Listed *Listed
	// Transcripts carries the agents' transcripts too: the remote's are
	// fetched to TranscriptsTracking, and the local ones the remote lacks
	// are pushed (created there, never overwritten).
	Transcripts bool
}

// Sync fetches remote's evolve notes refs, merges each into the local ref
// of the same name, and pushes every local evolve notes ref the remote does
// not have as it is now, each with a lease on what was fetched. When a push
// loses the race to another clone, it waits a little (longer each time,
// jittered) and fetches, merges and pushes again, until o.Patience is up.
func Sync(repo *gitstore.Repo, remote string, o Options) (*Report, error) {
	rep := &Report{Remote: remote}
	patience := o.Patience
	if patience <= 0 {
		patience = DefaultPatience
	}
	now, sleep := o.now, o.sleep
	if now == nil {
		now, sleep = time.Now, time.Sleep
	}
	since := func(t time.Time) time.Duration { return now().Sub(t) }
	start := now()
	defer func() { rep.Elapsed = since(start) }()
	lastSeen, fetchedBefore, mended := o.AsLastSeen, false, false
	pushed := map[string]bool{} // the refs a round's push moved
	for attempt := 1; ; attempt++ {
		rep.Attempts = attempt
		began := now()
		refs, transcripts, fetched, err := syncOnce(repo, remote, fetchedBefore, lastSeen, o)
		if errors.Is(err, gitstore.ErrPromised) && !mended {
			// a local ref a plain fetch moved through a partial clone's
			// filter: its objects are fetched, and the round is made again
			mended = true
			if err = fetchLocalWhole(repo, remote); err == nil {
				refs, transcripts, fetched, err = syncOnce(repo, remote, true, false, o)
			}
		}
		fetchedBefore = fetchedBefore || fetched
		for i := range refs {
			if refs[i].Pushed {
				pushed[refs[i].Ref] = true
			}
			refs[i].Pushed = pushed[refs[i].Ref]
		}
		if refs != nil || rep.Refs == nil {
			rep.Refs = refs // (a round that failed before it merged keeps the last one's)
		}
		rep.Transcripts += transcripts
		if !errors.Is(err, gitstore.ErrPushRejected) {
			return rep, err
		}
		if lastSeen && !fetched {
			// The remote moved since it was last seen: no race lost yet.
			lastSeen = false
			continue
		}
		lastSeen = false
		rep.LeaseLosses++
		wait := backoff(attempt+1, since(began))
		if since(start)+wait > patience {
			return rep, &GaveUpError{Remote: remote, Attempts: attempt, Elapsed: since(start)}
		}
		sleep(wait)
	}
}

// syncOnce is one fetch-merge-push round; again is true when a round
// before fetched, lastSeen for a round that fetches only when the local
// refs are not ahead of the remote as last seen (Options.AsLastSeen).
// didFetch says whether it fetched. A ref its push moved is Pushed, also
// when the push of another was refused.
func syncOnce(repo *gitstore.Repo, remote string, again, lastSeen bool, o Options) (out []RefReport, transcripts int, didFetch bool, err error) {
	refspecs := []string{"+" + NotesPrefix + "*:" + TrackingRef(remote, NotesPrefix) + "*"}
	if o.Transcripts {
		refspecs = append(refspecs, "+"+TranscriptsPrefix+"*:"+TranscriptsTracking(remote)+"*")
	}
	if !lastSeen {
		if err := fetchWhole(repo, remote, again, refspecs, o.Transcripts); err != nil {
			return nil, 0, false, err
		}
		didFetch = true
	}
	var local, fetched map[string]gitstore.Hash
	if l := o.Listed; lastSeen && !again && l != nil && l.remote == remote {
		local, fetched = l.local, l.tracking // listed just before, and nothing fetched since
	} else if local, fetched, err = notesRefs(repo, remote); err != nil {
		return nil, 0, didFetch, err
	}
	if lastSeen {
		// Not fetching is for a push of local refs that are ahead of the
		// remote's as last seen; anything else fetches.
		ahead, err := aheadOfLastSeen(repo, remote, local, fetched)
		if err != nil {
			return nil, 0, false, err
		}
		if !ahead {
			if err := fetchWhole(repo, remote, again, refspecs, o.Transcripts); err != nil {
				return nil, 0, false, err
			}
			didFetch = true
			if local, fetched, err = notesRefs(repo, remote); err != nil {
				return nil, 0, didFetch, err
			}
		}
	}
	names := map[string]bool{}
	for ref := range local {
		names[ref] = true
	}
	for tracking := range fetched {
		names[NotesPrefix+strings.TrimPrefix(tracking, TrackingRef(remote, NotesPrefix))] = true
	}
	var updates []gitstore.PushUpdate
	var pushed []int
	var refused error
	for _, ref := range syncOrder(names) {
		rr := RefReport{Ref: ref, Local: local[ref], Remote: fetched[TrackingRef(remote, ref)]}
		if o.Admit != nil {
			if err := o.Admit(ref, rr.Local, rr.Remote); err != nil {
				rr.Result, rr.Refused = rr.Local, true
				out = append(out, rr)
				refused = errors.Join(refused, err)
				continue
			}
		}
		result, merged, err := Merge(repo, ref, rr.Remote)
		if err != nil {
			return out, 0, didFetch, fmt.Errorf("merging %s of %s: %w", ref, remote, err)
		}
		rr.Result, rr.Merged = result, merged
		if !result.IsZero() && result != rr.Remote {
			updates = append(updates, gitstore.PushUpdate{Local: result, Remote: ref, Expect: rr.Remote})
			pushed = append(pushed, len(out))
		}
		out = append(out, rr)
	}
	if o.BeforePush != nil {
		for _, u := range updates {
			if err := o.BeforePush(u.Remote, u.Local); err != nil {
				return out, 0, didFetch, errors.Join(refused, err)
			}
		}
	}
	if o.Transcripts {
		missing, err := missingTranscripts(repo, remote)
		if err != nil {
			return out, 0, didFetch, err
		}
		updates = append(updates, missing...)
		transcripts = len(missing)
	}
	results, err := repo.Push(remote, updates)
	if err != nil {
		// Those the remote took are moved, whatever it refused.
		took := map[string]bool{}
		for _, r := range results {
			took[r.Ref] = r.Status == "ok" || r.Status == "new"
		}
		for _, i := range pushed {
			out[i].Pushed = took[out[i].Ref]
		}
		created := 0
		for _, u := range updates {
			if id, ok := strings.CutPrefix(u.Remote, TranscriptsPrefix); ok && took[u.Remote] {
				created++
				_ = repo.UpdateRef(TranscriptsTracking(remote)+id, u.Local, gitstore.ZeroHash, "git evolve sync: pushed")
			}
		}
		return out, created, didFetch, err
	}
	for _, i := range pushed {
		out[i].Pushed = true
	}
	// The remote has the transcripts now: so say their copies, as a fetch
	// would (a push moves only the copies of refs a fetch refspec names).
	for _, u := range updates {
		if id, ok := strings.CutPrefix(u.Remote, TranscriptsPrefix); ok {
			_ = repo.UpdateRef(TranscriptsTracking(remote)+id, u.Local, gitstore.ZeroHash, "git evolve sync: pushed")
		}
	}
	return out, transcripts, didFetch, refused
}

// aheadOfLastSeen reports whether every evolve notes ref of remote, as
// last seen (its remote-tracking copy), is the local ref of that name or
// one of its ancestors: the remote brings nothing, as far as this clone
// knows.
func aheadOfLastSeen(repo *gitstore.Repo, remote string, local, tracking map[string]gitstore.Hash) (bool, error) {
	return within(repo, tracking, local, func(t string) string {
		return NotesPrefix + strings.TrimPrefix(t, TrackingRef(remote, NotesPrefix))
	})
}

// within reports whether each ref of refs has a copy in copies (the ref
// named copyOf(ref)) that holds its commit or a descendant of it.
func within(repo *gitstore.Repo, refs, copies map[string]gitstore.Hash, copyOf func(string) string) (bool, error) {
	for ref, h := range refs {
		c, ok := copies[copyOf(ref)]
		if !ok {
			return false, nil
		}
		if c == h {
			continue
		}
		if in, err := repo.IsAncestor(h, c); err != nil || !in {
			return false, err
		}
	}
	return true, nil
}

// missingTranscripts are the pushes of the local transcripts remote lacks
// (as just fetched), each one to be created there, never to overwrite.
func missingTranscripts(repo *gitstore.Repo, remote string) ([]gitstore.PushUpdate, error) {
	refs, err := repo.ListRefsUnder(TranscriptsPrefix, TranscriptsTracking(remote))
	if err != nil {
		return nil, err
	}
	var out []gitstore.PushUpdate
	for ref, h := range refs {
		id, ok := strings.CutPrefix(ref, TranscriptsPrefix)
		if !ok {
			continue
		}
		if _, there := refs[TranscriptsTracking(remote)+id]; !there {
			out = append(out, gitstore.PushUpdate{Local: h, Remote: ref})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Remote < out[j].Remote })
	return out, nil
}

// Delivered reports whether remote has, as this clone last saw it (its
// remote-tracking refs, which a fetch or a push moves), everything of every
// local evolve notes ref: each is its tracking ref's commit or one of that
// commit's ancestors. A push guard that only delivers the ledger has
// nothing to do then; a remote that moved since is not asked. With
// transcripts, every local transcript must be there too.
// The refs it listed are returned for Options.Listed, so that a Sync that
// follows does not list them again.
func Delivered(repo *gitstore.Repo, remote string, transcripts bool) (bool, *Listed, error) {
	locals, tracking, err := notesRefs(repo, remote)
	if err != nil {
		return false, nil, err
	}
	listed := &Listed{remote: remote, local: locals, tracking: tracking}
	if transcripts {
		if missing, err := missingTranscripts(repo, remote); err != nil || len(missing) > 0 {
			return false, listed, err
		}
	}
	done, err := within(repo, locals, tracking, func(ref string) string { return TrackingRef(remote, ref) })
	return done, listed, err
}

// Listed is what one git for-each-ref said of the local evolve notes refs
// and their remote-tracking copies of a remote.
type Listed struct {
	remote          string
	local, tracking map[string]gitstore.Hash
}

// fetchWhole is the fetch of the refs of refspecs from remote. In a
// partial clone their objects come whole (gitstore.Fetch), and the
// objects an earlier fetch brought through the clone's filter (a plain git
// fetch with the refspec init sets, or into the local refs) are fetched
// by name: a read of them never fetches, and would give up.
func fetchWhole(repo *gitstore.Repo, remote string, again bool, refspecs []string, transcripts bool) error {
	if err := repo.Fetch(remote, gitstore.FetchOptions{Again: again}, refspecs...); err != nil {
		return err
	}
	if !repo.PartialClone() {
		return nil
	}
	prefixes := []string{TrackingRef(remote, NotesPrefix), NotesPrefix}
	if transcripts {
		prefixes = append(prefixes, TranscriptsTracking(remote))
	}
	refs, err := repo.ListRefsUnder(prefixes...)
	if err != nil {
		return err
	}
	var tips, not []gitstore.Hash
	for ref, h := range refs {
		if strings.HasPrefix(ref, NotesPrefix) {
			not = append(not, h)
		} else {
			tips = append(tips, h)
		}
	}
	if err := fetchMissing(repo, remote, tips, not); err != nil {
		return err
	}
	// A local ref a plain fetch moved through the filter lacks objects of
	// its notes as they are: those are looked for (the trees of the
	// tips, not their history: 0.05 s at 10,000 records, 0.5 s at
	// 100,000), and when one is missing, every object of the local refs'
	// history is.
	if missing, err := repo.MissingAt(not); err != nil || len(missing) == 0 {
		return err
	}
	return fetchLocalWhole(repo, remote)
}

// fetchMissing fetches by name the objects of the history of tips, less
// that of not, that are not here, and checks that they then are.
func fetchMissing(repo *gitstore.Repo, remote string, tips, not []gitstore.Hash) error {
	missing, err := repo.Missing(tips, not)
	if err != nil || len(missing) == 0 {
		return err
	}
	if err := repo.FetchObjects(remote, missing); err != nil {
		return fmt.Errorf("%d object(s) of the notes were fetched through this partial clone's filter: %w", len(missing), err)
	}
	if missing, err = repo.Missing(tips, not); err == nil && len(missing) > 0 {
		err = fmt.Errorf("%d object(s) of the notes from %s are still not here after fetching them", len(missing), remote)
	}
	return err
}

// fetchLocalWhole fetches from remote, by name, the objects of the local
// notes refs that are not here: after a plain fetch moved one of them
// through a partial clone's filter. It lists every object of their
// history once.
func fetchLocalWhole(repo *gitstore.Repo, remote string) error {
	refs, err := repo.ListRefsUnder(NotesPrefix)
	if err != nil {
		return err
	}
	tips := make([]gitstore.Hash, 0, len(refs))
	for _, h := range refs {
		tips = append(tips, h)
	}
	return fetchMissing(repo, remote, tips, nil)
}

// notesRefs lists the local evolve notes refs and their remote-tracking
// copies of remote, in one git for-each-ref.
func notesRefs(repo *gitstore.Repo, remote string) (local, tracking map[string]gitstore.Hash, err error) {
	both, err := repo.ListRefsUnder(TrackingRef(remote, NotesPrefix), NotesPrefix)
	if err != nil {
		return nil, nil, err
	}
	local, tracking = map[string]gitstore.Hash{}, map[string]gitstore.Hash{}
	for ref, h := range both {
		if strings.HasPrefix(ref, TrackingRef(remote, NotesPrefix)) {
			tracking[ref] = h
		} else {
			local[ref] = h
		}
	}
	return local, tracking, nil
}

// ControlRef holds the loop's control events and the acknowledgements of
// breaches: it is merged before the ledger, so that an acknowledgement
// arrives with the ledger it is about.
const ControlRef = "refs/notes/evolve-control"

// syncOrder is the order refs are merged in: the control events first,
// then the others by name.
func syncOrder(names map[string]bool) []string {
	out := sortedKeys(names)
	sort.SliceStable(out, func(i, j int) bool { return out[i] == ControlRef && out[j] != ControlRef })
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Merge merges the notes commit theirs into the local notes ref: a
// fast-forward when the local ref is behind (or absent), nothing when it
// is ahead, else a merge commit whose tree is the union of both (see
// MergeNote). It moves the ref with compare-and-swap, redoing the merge
// when a local writer moved it first, and returns the ref's new commit and
// how many notes the merge changed.
func Merge(repo *gitstore.Repo, ref string, theirs gitstore.Hash) (gitstore.Hash, int, error) {
	for attempt := 1; ; attempt++ {
		result, merged, err := mergeOnce(repo, ref, theirs)
		if errors.Is(err, gitstore.ErrRefChanged) && attempt < 20 {
			time.Sleep(time.Duration(1+rand.IntN(5*attempt)) * time.Millisecond)
			continue
		}
		return result, merged, err
	}
}

func mergeOnce(repo *gitstore.Repo, ref string, theirs gitstore.Hash) (gitstore.Hash, int, error) {
	ours, err := repo.ReadNotes(ref)
	if err != nil {
		return gitstore.ZeroHash, 0, err
	}
	switch {
	case theirs.IsZero() || theirs == ours.Commit():
		return ours.Commit(), 0, nil
	case ours.Commit().IsZero():
		if err := repo.UpdateRef(ref, theirs, gitstore.ZeroHash, "git evolve: sync"); err != nil {
			return gitstore.ZeroHash, 0, err
		}
		return theirs, 0, nil
	}
	if ahead, err := repo.IsAncestor(theirs, ours.Commit()); err != nil || ahead {
		return ours.Commit(), 0, err
	}
	if behind, err := repo.IsAncestor(ours.Commit(), theirs); err != nil {
		return gitstore.ZeroHash, 0, err
	} else if behind {
		if err := repo.UpdateRef(ref, theirs, ours.Commit(), "git evolve: sync, fast-forward"); err != nil {
			return gitstore.ZeroHash, 0, err
		}
		return theirs, 0, nil
	}
	other, err := repo.NotesAt(theirs)
	if err != nil {
		return gitstore.ZeroHash, 0, err
	}
	base := repo.EmptyNotes()
	baseCommit := gitstore.ZeroHash
	if b, ok, err := repo.MergeBase(ours.Commit(), theirs); err != nil {
		return gitstore.ZeroHash, 0, err
	} else if ok {
		if base, err = repo.NotesAt(b); err != nil {
			return gitstore.ZeroHash, 0, err
		}
		baseCommit = b
	}
	// What the other side changed since the common base, merged into ours.
	changes, err := other.DiffNotes(base)
	if err != nil {
		return gitstore.ZeroHash, 0, err
	}
	var edits []gitstore.NoteEdit
	brought := -1 // the largest cycle of the notes the other side changed (mergedLargest)
	for _, ch := range changes {
		if len(ch.New) == 0 {
			continue // removed there: kept here
		}
		theirData, err := concat(repo, ch.New)
		if err != nil {
			return gitstore.ZeroHash, 0, err
		}
		if n, ok := ledger.MaxCycle(theirData); ok {
			brought = max(brought, n)
		}
		mine, err := ours.Find(ch.Object)
		if err != nil {
			return gitstore.ZeroHash, 0, err
		}
		ourData, err := concat(repo, mine)
		if err != nil {
			return gitstore.ZeroHash, 0, err
		}
		baseData, err := concat(repo, ch.Old)
		if err != nil {
			return gitstore.ZeroHash, 0, err
		}
		if n, ok := ledger.MaxCycle(baseData); ok {
			brought = max(brought, n)
		}
		merged := mergeNote3(ref, baseData, ourData, theirData)
		if len(mine) == 1 && bytes.Equal(merged, ourData) {
			continue // nothing new here
		}
		blob, err := repo.WriteBlob(merged)
		if err != nil {
			return gitstore.ZeroHash, 0, err
		}
		edits = append(edits, gitstore.NoteEdit{Object: ch.Object, Blob: blob})
	}
	extras, err := markers(repo, ref, ours, other)
	if err != nil {
		return gitstore.ZeroHash, 0, err
	}
	if ref == LedgerRef {
		// an older layout's index of cycles, if there is one, goes
		if extras, err = ours.TakingOut(extras, ledger.OldIndexNames...); err != nil {
			return gitstore.ZeroHash, 0, err
		}
	}
	tree, err := ours.Tree()
	if err != nil {
		return gitstore.ZeroHash, 0, err
	}
	if len(edits) > 0 || len(extras) > 0 {
		var ix *gitstore.NotesIndex
		if ref == LedgerRef {
			ix = cycleIndex
		}
		if tree, err = ours.ApplyNotesIndexed(edits, extras, ix); err != nil {
			return gitstore.ZeroHash, 0, err
		}
	}
	author, committer, err := repo.Identity()
	if err != nil {
		return gitstore.ZeroHash, 0, err
	}
	msg := fmt.Sprintf("git evolve: merge %s (%d note(s) from %s)\n", strings.TrimPrefix(ref, "refs/notes/"), len(edits), theirs.Short())
	if ref == LedgerRef {
		if n, ok := mergedLargest(repo, baseCommit, base, ours, brought); ok {
			msg += fmt.Sprintf("\n%s: %d\n", ledger.LargestTrailer, n)
		}
	}
	next, err := ours.CommitNotesMerge(ref, tree, msg, author, committer, theirs)
	if err != nil {
		return gitstore.ZeroHash, 0, err
	}
	return next.Commit(), len(edits), nil
}

// mergedLargest is the largest cycle of the ledger a merge makes: every
// line of it is one side's, and each side's ledger is the merge base's
// with the notes that side changed since. So the bound is the larger of
// what the base names in its ledger.LargestTrailer, the largest cycle of
// the notes the other side changed (brought, -1: none; read by the merge)
// and that of the notes ours changed, read here (the records made here
// since the two parted). Neither tip's trailer is taken: a tip accepted
// as it was (sync --accept-remote) may name too little. ok is false, and
// the merge names no bound, when there is no merge base, the base names
// none (plain git's commits), or a note cannot be read. A base that is
// itself a commit accepted as it was is taken at its word, as every reader
// of the notes history takes it: accepting a trailer that names too little
// accepts that.
func mergedLargest(repo *gitstore.Repo, base gitstore.Hash, baseNotes, ours *gitstore.Notes, brought int) (int, bool) {
	if base.IsZero() {
		return 0, false
	}
	ci, err := repo.Commit(base)
	if err != nil {
		return 0, false
	}
	n, ok := ledger.LargestCycle(ci.Message)
	if !ok {
		return 0, false
	}
	n = max(n, brought)
	changed, err := ours.DiffNotes(baseNotes)
	if err != nil {
		return 0, false
	}
	for _, ch := range changed {
		data, err := concat(repo, ch.New)
		if err != nil {
			return 0, false
		}
		if m, ok := ledger.MaxCycle(data); ok {
			n = max(n, m)
		}
	}
	return n, true
}

// markers checks the ledger's schema markers of both sides and returns the
// root entry to write: the newer of the two (refusing one newer than this
// git-evolve writes).
func markers(repo *gitstore.Repo, ref string, ours, theirs *gitstore.Notes) (map[string]gitstore.Hash, error) {
	if ref != LedgerRef {
		return nil, nil
	}
	var best gitstore.Hash
	for _, n := range []*gitstore.Notes{ours, theirs} {
		h, ok, err := n.NonNote(ledger.MarkerName)
		if err != nil || !ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		data, err := repo.ReadBlob(h)
		if err != nil {
			return nil, err
		}
		if err := ledger.CheckWritable(data); err != nil {
			return nil, err
		}
		best = h // theirs after ours: both are writable, either is fine; ours is rewritten by the next record
	}
	mh, err := repo.WriteBlob(ledger.MarkerBytes())
	if err != nil {
		return nil, err
	}
	if best == mh {
		return nil, nil
	}
	return map[string]gitstore.Hash{ledger.MarkerName: mh}, nil
}

func concat(repo *gitstore.Repo, blobs []gitstore.Hash) ([]byte, error) {
	var out []byte
	for _, b := range blobs {
		data, err := repo.ReadBlob(b)
		if err != nil {
			return nil, err
		}
		out = append(out, data...)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
	}
	return out, nil
}

// mergeNote3 merges two versions of a note that share base: for a ledger
// note of records, a record (by id) that one side changed since base and the
// other did not comes out as that side has it (a repair puts a record back
// this way in every clone); everything else is the union (MergeNote). A
// record one side removed stays.
func mergeNote3(ref string, base, ours, theirs []byte) []byte {
	if ref != LedgerRef || len(base) == 0 {
		return MergeNote(ref, ours, theirs)
	}
	b, badB := ledger.ParseLines(base)
	o, badO := ledger.ParseLines(ours)
	t, badT := ledger.ParseLines(theirs)
	if len(badB)+len(badO)+len(badT) > 0 {
		return MergeNote(ref, ours, theirs)
	}
	was := map[string]string{}
	for i := range b {
		if b[i].ID != "" {
			was[b[i].ID] = string(b[i].Marshal())
		}
	}
	theirsNow := map[string]string{}
	for i := range t {
		theirsNow[t[i].ID] = string(t[i].Marshal())
	}
	oursNow := map[string]string{}
	for i := range o {
		oursNow[o[i].ID] = string(o[i].Marshal())
	}
	// Ours where theirs changed a record ours left as it was: theirs.
	keep := o[:0:0]
	for i := range o {
		id := o[i].ID
		base, inBase := was[id]
		if their, ok := theirsNow[id]; inBase && ok && oursNow[id] == base && their != base {
			continue // theirs replaces it
		}
		keep = append(keep, o[i])
	}
	// Theirs where ours changed a record theirs left as it was: ours.
	add := t[:0:0]
	for i := range t {
		id := t[i].ID
		base, inBase := was[id]
		if our, ok := oursNow[id]; inBase && ok && theirsNow[id] == base && our != base {
			continue
		}
		add = append(add, t[i])
	}
	return ledger.FormatNote(append(keep, add...), nil)
}

// MergeNote is the union of two versions of one note of ref. A ledger note
// made of records only comes out in canonical form: every record of either
// side, an identical one once, sorted (what git notes merge -s
// cat_sort_uniq leaves, which is also a valid merge). A ledger note that
// holds other text keeps ours byte for byte, with the lines of theirs it
// lacks after it. The other evolve notes (fitness snapshots and the like,
// JSON lines) are merged line by line, sorted and unique.
func MergeNote(ref string, ours, theirs []byte) []byte {
	if ref == LedgerRef {
		a, badA := ledger.ParseLines(ours)
		b, badB := ledger.ParseLines(theirs)
		if len(badA) == 0 && len(badB) == 0 {
			return ledger.FormatNote(append(a, b...), nil)
		}
		have := map[string]bool{}
		for _, l := range bytes.Split(ours, []byte("\n")) {
			have[string(l)] = true
		}
		out := append([]byte(nil), ours...)
		for _, l := range bytes.Split(theirs, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 && !have[string(l)] {
				have[string(l)] = true
				out = append(append(out, l...), '\n')
			}
		}
		return out
	}
	var lines []string
	seen := map[string]bool{}
	for _, part := range [][]byte{ours, theirs} {
		for _, l := range strings.Split(string(part), "\n") {
			if l = strings.TrimSpace(l); l != "" && !seen[l] {
				seen[l] = true
				lines = append(lines, l)
			}
		}
	}
	sort.Strings(lines)
	if len(lines) == 0 {
		return nil
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

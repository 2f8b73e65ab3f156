package cycle

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/filelock"
	"github.com/git-evolve/git-evolve/gate"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/internal/atomicfile"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// OpenCycle is a cycle that has started and not finished, in one worktree.
type OpenCycle struct {
	Cycle     int    `json:"cycle"`
	ID        string `json:"id"`
	Target    string `json:"target"`
	Start     string `json:"start"` // the commit the cycle started from
	StartedAt string `json:"started_at"`
	Era       string `json:"era"` // the goals file's era at the start
	// Before is the goals as measured at the start (a fitness snapshot).
	Before json.RawMessage `json:"before,omitempty"`
	// BeforeCensus is what the test runners told of the tests the gate
	// ran at the start (nil when none could tell): fewer passing at the
	// finish is a regression.
	BeforeCensus *gate.Census `json:"before_census,omitempty"`
	// Holdout is the blob of the holdout checks the cycle started with,
	// kept by HoldoutRef, and HoldoutBefore their measure then: what
	// judges it besides its goals, never told to its agent.
	Holdout       string          `json:"holdout,omitempty"`
	HoldoutBefore json.RawMessage `json:"holdout_before,omitempty"`
	// Goals is the blob of the goals file as it was at the start, kept by
	// GoalsRef: the ruler the cycle is judged by, even if it was never
	// committed.
	Goals string `json:"goals,omitempty"`
	// GoalsName is the name of that goals file: GOALS.md, or ""
	// for GOALS.yaml.
	GoalsName string `json:"goals_name,omitempty"`
	// Finish is the finish under way, once the cycle's work is judged.
	Finish *Finishing `json:"finish,omitempty"`
	// Reverts is set when the cycle is a later revert of a finished one.
	Reverts *Reverting `json:"reverts,omitempty"`
	// Item is the work-queue item the cycle took, Rung the rung of the
	// work ladder that chose its work, Run the loop run it belongs to.
	Item string `json:"item,omitempty"`
	Rung string `json:"rung,omitempty"`
	Run  string `json:"run,omitempty"`
	// Fields are more fields for the cycle's record, under their own names
	// (the pinned queue's queue_item, queue_index, …).
	Fields map[string]json.RawMessage `json:"fields,omitempty"`
	// Branch is the ref HEAD named when the cycle started ("" detached):
	// the line of history its record belongs to.
	Branch string `json:"branch,omitempty"`
	// Base is the working tree as the cycle found it, kept by BaseRef,
	// when it held changes of its own outside .agents/** ("" when it did
	// not): they are not the cycle's work.
	Base string `json:"base,omitempty"`
	// Clock is the machine's clock (nanoseconds since 1970, not the
	// tool's, which GIT_COMMITTER_DATE may set) as the cycle started: a
	// file unchanged since was not written by the cycle.
	Clock int64 `json:"clock,omitempty"`
	// Ignored is what the start kept of the ignored files (IgnoredRef),
	// and what it left out.
	Ignored *IgnoredKept `json:"ignored,omitempty"`
	// Aborting is set once an abort began (AbortCycle): a cycle whose
	// abort was interrupted is aborted, never finished, by what comes next.
	Aborting *Aborting `json:"aborting,omitempty"`
}

// Aborting is an abort under way: why the cycle is aborted, and what it
// did with the ignored files the cycle's start kept.
type Aborting struct {
	Reason string `json:"reason,omitempty"`
	// IgnoredChanged are those the cycle removed or changed ("- path",
	// "M path"), as the abort found them before it saved the work.
	IgnoredChanged []string `json:"ignored_changed,omitempty"`
	// IgnoredPut are those put back, IgnoredNotBack those that were not,
	// each with why (IgnoredRef then stays).
	IgnoredPut     []string `json:"ignored_put,omitempty"`
	IgnoredNotBack []string `json:"ignored_not_back,omitempty"`
	// Tampering and Markers are what the caller saw during the cycle
	// (AbortNotes), kept until the record carries them.
	Tampering []string `json:"tampering,omitempty"`
	Markers   []string `json:"markers,omitempty"`
}

// AbortNotes are what the caller of AbortCycle saw during the cycle, for
// its record, as a finish's record carries them (FinishOptions): attempts
// to weaken the cycle's judgment (tampering), and what happened to the
// operator's markers (markers). An abort resumed keeps those it was first
// given when it is given none.
type AbortNotes struct {
	Tampering []string
	Markers   []string
}

// keptRefs are the refs an open cycle keeps (its start, its goals file),
// with the values they hold.
func (c *OpenCycle) keptRefs() map[string]gitstore.Hash {
	refs := map[string]gitstore.Hash{}
	if h, err := gitstore.ParseHash(c.Start); err == nil {
		refs[StartRef(c.ID)] = h
	}
	if h, err := gitstore.ParseHash(c.Goals); err == nil {
		refs[GoalsRef(c.ID)] = h
	}
	if h, err := gitstore.ParseHash(c.Base); err == nil {
		refs[BaseRef(c.ID)] = h
	}
	if h, err := gitstore.ParseHash(c.Holdout); err == nil {
		refs[HoldoutRef(c.ID)] = h
	}
	if c.Ignored != nil {
		if h, err := gitstore.ParseHash(c.Ignored.Commit); err == nil {
			refs[IgnoredRef(c.ID)] = h
		}
	}
	return refs
}

// GoalsRef keeps the goals file a cycle started with.
func GoalsRef(id string) string { return "refs/evolve/cycles/" + id + "/goals" }

// StartRef is the ref that keeps a cycle's start commit from gc.
func StartRef(id string) string { return "refs/evolve/cycles/" + id + "/start" }

// SavedRef is where the work of an aborted cycle is kept.
func SavedRef(id string) string { return "refs/evolve/cycles/" + id + "/aborted" }

// ErrNoOpenCycle is returned when a worktree has no open cycle.
var ErrNoOpenCycle = errors.New("no cycle is open in this worktree")

// openPath is the open cycle's file: per worktree.
func (l *Ledger) openPath() string { return filepath.Join(l.repo.GitDir(), "evolve", "cycle.json") }

// reservedPath lists the numbers taken by open cycles of every worktree.
func (l *Ledger) reservedPath() string { return filepath.Join(l.stateDir, "reserved") }

// Current returns the open cycle of this worktree, or ErrNoOpenCycle.
func (l *Ledger) Current() (*OpenCycle, error) {
	c, err := readOpen(l.openPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoOpenCycle
	}
	return c, err
}

// readOpen reads an open cycle's file.
func readOpen(path string) (*OpenCycle, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c OpenCycle
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s does not parse: %v (it holds the open cycle; fix or remove it)", path, err)
	}
	return &c, nil
}

// Refusal is a cycle command that cannot go on in the state the cycle or
// the repository is in: what is wrong and what to do. Nothing was changed.
type Refusal struct{ Msg, Hint string }

func (e *Refusal) Error() string { return e.Msg }

// Busy is a refusal because another process is at work on the same thing
// (another finish, a run driving the worktree, a HEAD moved meanwhile):
// nothing is wrong with the command, it is to be run again later. Hint
// says when.
type Busy struct{ Msg, Hint string }

func (e *Busy) Error() string { return e.Msg }

// StartOptions are what a cycle starts with.
type StartOptions struct {
	Target    string
	Era       string          // the goals file's era
	GoalsFile []byte          // the goals file, kept as the cycle's ruler
	GoalsName string          // its name (GOALS.yaml when empty, or GOALS.md)
	Before    json.RawMessage // the goals measured as the cycle starts
	// BeforeCensus is the census of the tests at the start (MeasureStart).
	BeforeCensus *gate.Census
	// HoldoutFile is the content of the holdout checks, kept as part of
	// the cycle's ruler, and HoldoutBefore their measure at the start.
	HoldoutFile   []byte
	HoldoutBefore json.RawMessage
	// Claim, when set, is asked for the number with the next free one and
	// returns the number to take (one reserved on a remote, see
	// share.Claim).
	Claim func(next int) (int, error)
	// Item is the work-queue item the cycle took (claimed by the caller),
	// Rung the rung of the work ladder that chose the work, Run the loop
	// run the cycle belongs to; all optional, kept in the record.
	Item, Rung, Run string
	// Fields are more fields for the record (see OpenCycle.Fields).
	Fields map[string]json.RawMessage
	// NoIgnored keeps no ignored file (a later revert, which runs no agent).
	NoIgnored bool
}

// StartCycle opens a cycle in this worktree on HEAD: it refuses while a
// cycle is open here or git has a merge or rebase in progress, takes the
// next cycle number (reserved, so that no worktree and no record takes it
// meanwhile), keeps the start commit alive with a ref, and gives the cycle
// a stable id.
func (l *Ledger) StartCycle(o StartOptions) (*OpenCycle, error) {
	target, era, goalsFile, before, claim := o.Target, o.Era, o.GoalsFile, o.Before, o.Claim
	if what := l.repo.InProgress(); what != "" {
		return nil, &Refusal{"git has " + what + " in progress in this worktree", "finish or abort it first"}
	}
	head, err := l.repo.ResolveCommits("HEAD")
	if err != nil {
		return nil, &Refusal{"there is no commit to start a cycle from", "commit first"}
	}
	c := &OpenCycle{ID: newID(), Target: target, Start: head[0].String(),
		StartedAt: l.now().UTC().Format(time.RFC3339), Era: era, Before: before, BeforeCensus: o.BeforeCensus,
		Item: o.Item, Rung: o.Rung, Run: o.Run, Fields: o.Fields}
	if c.Branch, err = l.repo.HeadBranch(); err != nil {
		return nil, err
	}
	// What the working tree holds of its own is saved before anything
	// else: it is not the cycle's work, and a revert puts it back.
	// So are the ignored files, within a budget: an agent may remove them,
	// and a regressed or aborted cycle puts them back. Both captures run
	// side by side.
	c.Clock = time.Now().UnixNano()
	type kept struct {
		k   *IgnoredKept
		err error
	}
	ignored := make(chan kept, 1)
	if o.NoIgnored {
		ignored <- kept{}
	} else {
		go func() {
			t0 := time.Now()
			k, err := l.captureIgnored(c.ID)
			gitstore.Tracef("start: the ignored files kept (%s)", ms(time.Since(t0)))
			ignored <- kept{k, err}
		}()
	}
	base, err := l.captureBase(head[0])
	ig := <-ignored
	if err == nil {
		err = ig.err
	}
	if err != nil {
		return nil, err
	}
	c.Ignored = ig.k
	unlock, err := filelock.Lock(l.LockPath())
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Under the lock, so that two starts in one worktree cannot both pass.
	if open, err := l.Current(); err == nil {
		return nil, &Refusal{fmt.Sprintf("cycle %d (target %s) is already open in this worktree, since %s", open.Cycle, open.Target, open.StartedAt),
			"see it with 'git evolve cycle status'; drop it with 'git evolve cycle abort'"}
	} else if !errors.Is(err, ErrNoOpenCycle) {
		return nil, err
	}
	ix, err := l.Index()
	if err != nil {
		return nil, err
	}
	journal, _, err := l.journal.Read()
	if err != nil {
		return nil, err
	}
	reserved, err := l.reserved()
	if err != nil {
		return nil, err
	}
	copies, err := l.CopiesMax()
	if err != nil {
		return nil, err
	}
	c.Cycle = max(nextFree(ix, journal, reserved), copies+1)
	if claim != nil {
		if c.Cycle, err = claim(c.Cycle); err != nil {
			return nil, err
		}
	}
	// Reservation, then the start ref, then the open cycle: a crash in
	// between leaves a skipped number or an unused ref, never a lost one.
	if err := atomicfile.AppendLine(l.reservedPath(), fmt.Sprintf("%d %s", c.Cycle, c.ID)); err != nil {
		return nil, err
	}
	if err := l.repo.CreateRef(StartRef(c.ID), head[0], fmt.Sprintf("git evolve: cycle %d starts", c.Cycle)); err != nil {
		return nil, err
	}
	if goalsFile != nil {
		blob, err := l.repo.WriteBlob(goalsFile)
		if err != nil {
			return nil, err
		}
		if err := l.repo.CreateRef(GoalsRef(c.ID), blob, fmt.Sprintf("git evolve: cycle %d's goals", c.Cycle)); err != nil {
			return nil, err
		}
		c.Goals = blob.String()
		if o.GoalsName != goals.FileName {
			c.GoalsName = o.GoalsName
		}
	}
	if o.HoldoutFile != nil {
		blob, err := l.repo.WriteBlob(o.HoldoutFile)
		if err != nil {
			return nil, err
		}
		if err := l.repo.CreateRef(HoldoutRef(c.ID), blob, fmt.Sprintf("git evolve: cycle %d's holdout checks", c.Cycle)); err != nil {
			return nil, err
		}
		c.Holdout, c.HoldoutBefore = blob.String(), o.HoldoutBefore
	}
	if !base.IsZero() {
		if err := l.repo.CreateRef(BaseRef(c.ID), base, fmt.Sprintf("git evolve: cycle %d's working tree as it found it", c.Cycle)); err != nil {
			return nil, err
		}
		c.Base = base.String()
	}
	if c.Ignored != nil && c.Ignored.Commit != "" {
		if err := l.repo.CreateRef(IgnoredRef(c.ID), mustParse(c.Ignored.Commit), fmt.Sprintf("git evolve: cycle %d's ignored files as it found them", c.Cycle)); err != nil {
			return nil, err
		}
	}
	if err := l.saveOpen(c); err != nil {
		return nil, err
	}
	return c, nil
}

// keepSave points ref at the saved work h (old is what the ref holds now,
// zero when it is new) and notes it in the saves list.
func (l *Ledger) keepSave(ref string, h, old gitstore.Hash, reason string) error {
	if err := l.repo.UpdateRef(ref, h, old, reason); err != nil {
		return err
	}
	return l.NoteSave(ref, h.String())
}

// saveOpen writes the open cycle's file (atomically: a crash leaves the
// old content or the new).
func (l *Ledger) saveOpen(c *OpenCycle) error {
	data, _ := json.MarshalIndent(c, "", "  ")
	return writeFileAtomic(l.openPath(), append(data, '\n'))
}

// removeOpen removes the open cycle's file: the worktree has no open cycle.
func (l *Ledger) removeOpen() error {
	if err := os.Remove(l.openPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// lockWorktree keeps other finishes and aborts of this worktree's cycle
// out while one runs (a finish may run the gate for minutes: a second one
// is refused at once, not made to wait).
func (l *Ledger) lockWorktree() (unlock func(), err error) {
	unlock, ok, err := filelock.TryLock(filepath.Join(l.repo.GitDir(), "evolve", "cycle.lock"))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &Busy{"another git evolve is finishing or aborting this worktree's cycle", "wait for it to end, or look at it with git evolve cycle status"}
	}
	return unlock, nil
}

// AbortCycle closes this worktree's open cycle without a productive
// record: its working tree, committed or not (untracked files included,
// ignored ones not), is first saved as a commit under SavedRef, then the
// cycle is recorded as unchanged and aborted, in the note on its start
// commit: a shared record, so that reviewers see the crashed and hung
// cycles too. Nothing in the working tree changes. reason, when given, is
// kept in the record.
func (l *Ledger) AbortCycle(reason string, notes AbortNotes) (*OpenCycle, gitstore.Hash, error) {
	wunlock, err := l.lockWorktree()
	if err != nil {
		return nil, gitstore.ZeroHash, err
	}
	defer wunlock()
	c, err := l.Current()
	if err != nil {
		return nil, gitstore.ZeroHash, err
	}
	head, err := l.repo.ResolveCommits("HEAD")
	if err != nil {
		return nil, gitstore.ZeroHash, err
	}
	if f := c.Finish; f != nil && f.Commit != "" {
		if moved, err := l.repo.IsAncestor(mustParse(f.Commit), head[0]); err != nil || moved {
			return nil, gitstore.ZeroHash, &Refusal{fmt.Sprintf("cycle %d is finishing (%s): it can no longer be aborted", c.Cycle, c.State(head[0])),
				"complete it with git evolve cycle finish"}
		}
	}
	// Who commits the save and the record is known before the cycle is
	// marked: an abort refused for want of an identity leaves the cycle as
	// it was, which a finish still takes. (An abort resumed may have
	// nothing left to commit, and goes on as before.)
	if c.Aborting == nil {
		if err := l.repo.CheckIdentity(); err != nil {
			return nil, gitstore.ZeroHash, err
		}
	}
	// From here on the cycle is being aborted: a finish refuses it and a
	// resumed run completes the abort, so that an abort interrupted after
	// its record never gets a second record under the cycle's id.
	prev := c.Aborting
	if prev == nil {
		prev = &Aborting{}
	}
	if reason == "" {
		reason = prev.Reason
	}
	if notes.Tampering == nil && notes.Markers == nil {
		notes = AbortNotes{Tampering: prev.Tampering, Markers: prev.Markers}
	}
	c.Aborting = &Aborting{Reason: reason, IgnoredChanged: prev.IgnoredChanged, IgnoredPut: prev.IgnoredPut, IgnoredNotBack: prev.IgnoredNotBack,
		Tampering: notes.Tampering, Markers: notes.Markers}
	if err := l.saveOpen(c); err != nil {
		return nil, gitstore.ZeroHash, err
	}
	// An abort resumed keeps the save it made: the ref it set before its
	// record, or the save the journal names for an abort an older
	// git-evolve journaled. Saving again would leave the record pointing at
	// a commit nothing keeps. Both are this clone's own: a note, which a
	// remote's ledger may have brought, is not asked.
	have, _, err := l.journal.Read()
	if err != nil {
		return nil, gitstore.ZeroHash, err
	}
	journaled := hasID(have, c.ID)
	saved := l.refOrZero(SavedRef(c.ID))
	if s, ok := journaledSave(have, c.ID); ok {
		saved = s
	}
	if saved.IsZero() {
		// The ignored files the cycle changed are saved with its work,
		// before they are put back.
		changes, present, err := l.ignoredChanges(c)
		if err != nil {
			return nil, gitstore.ZeroHash, err
		}
		c.Aborting.IgnoredChanged = changes
		if err := l.saveOpen(c); err != nil {
			return nil, gitstore.ZeroHash, err
		}
		saved, _, err = l.repo.SaveWorktree(head[0], savedMessage(c, "aborted"), l.withinSaveLimits(present)...)
		if err != nil {
			return nil, gitstore.ZeroHash, err
		}
	}
	if old := l.refOrZero(SavedRef(c.ID)); old != saved {
		if err := l.keepSave(SavedRef(c.ID), saved, old, fmt.Sprintf("git evolve: cycle %d aborted", c.Cycle)); err != nil {
			return nil, gitstore.ZeroHash, err
		}
	}
	l.die("abort-saved")
	if a := c.Aborting; !journaled && a.IgnoredPut == nil && a.IgnoredNotBack == nil {
		if a.IgnoredPut, a.IgnoredNotBack, err = l.putBackIgnored(c, saved); err != nil {
			return nil, gitstore.ZeroHash, err
		}
		if err := l.saveOpen(c); err != nil {
			return nil, gitstore.ZeroHash, err
		}
	}
	unlock, err := filelock.Lock(l.LockPath())
	if err != nil {
		return nil, gitstore.ZeroHash, err
	}
	defer unlock()
	rec := ledger.Record{V: ledger.SchemaMajor, ID: c.ID, Cycle: c.Cycle, Target: c.Target, Result: ledger.Unchanged,
		SHA: c.Start, CanonicalSHA: c.Start, CycleStartSHA: c.Start, Timestamp: l.now().UTC().Format(time.RFC3339),
		Extra: map[string]json.RawMessage{"aborted": json.RawMessage("true"), "saved": mustJSON(saved.String())}}
	for k, v := range map[string]string{"item": c.Item, "rung": c.Rung, "run": c.Run, "reason": reason, "era": c.Era, "branch": c.Branch, "base": c.Base} {
		if v != "" {
			rec.Extra[k] = mustJSON(v)
		}
	}
	if c.Clock != 0 && c.Run != "" { // for the driver's restore
		rec.Extra["clock"] = mustJSON(c.Clock)
	}
	if len(c.Aborting.IgnoredChanged) > 0 {
		rec.Extra["ignored_changed"] = mustJSON(c.Aborting.IgnoredChanged)
	}
	if len(c.Aborting.IgnoredNotBack) > 0 && c.Ignored != nil {
		rec.Extra["ignored"] = mustJSON(c.Ignored.Commit)
	}
	if len(c.Aborting.Tampering) > 0 {
		rec.Extra["tampering"] = mustJSON(c.Aborting.Tampering)
	}
	if len(c.Aborting.Markers) > 0 {
		rec.Extra["markers"] = mustJSON(c.Aborting.Markers)
	}
	for k, v := range c.Fields {
		if _, known := rec.Extra[k]; !known && len(v) > 0 {
			rec.Extra[k] = v
		}
	}
	if err := rec.Validate(); err != nil {
		return nil, gitstore.ZeroHash, fmt.Errorf("the record of cycle %d: %w", c.Cycle, err)
	}
	if _, err := ledger.Parse(rec.Marshal()); err != nil {
		return nil, gitstore.ZeroHash, fmt.Errorf("the record of cycle %d: %w", c.Cycle, err)
	}
	if !journaled { // journaled by an older git-evolve: not recorded twice
		start, err := gitstore.ParseHash(c.Start)
		if err != nil {
			return nil, gitstore.ZeroHash, fmt.Errorf("cycle %d: its start %q is no commit name", c.Cycle, c.Start)
		}
		// An abort interrupted after this step is not recorded twice: the
		// write leaves a note that has the record's id as it is.
		err = l.Update(func(snap *gitstore.Notes, ix *store.Index) (map[gitstore.Hash][]ledger.Record, func(int) string, error) {
			if err := l.Stamp(&rec, snap, ix); err != nil {
				return nil, nil, err
			}
			return map[gitstore.Hash][]ledger.Record{start: {rec}},
				func(int) string { return fmt.Sprintf("git evolve: record cycle %d (unchanged, aborted)", rec.Cycle) }, nil
		})
		if err != nil {
			return nil, gitstore.ZeroHash, err
		}
	}
	l.die("recorded")
	if err := l.release(c.ID); err != nil {
		return nil, gitstore.ZeroHash, err
	}
	kept := c.keptRefs()
	if len(c.Aborting.IgnoredNotBack) > 0 {
		if err := l.keepIgnored(c, kept); err != nil {
			return nil, gitstore.ZeroHash, err
		}
	}
	if c.Run != "" {
		// The driver brings a failed agent's working tree back to the
		// start next (RestoreStart): the base it puts back stays until then.
		delete(kept, BaseRef(c.ID))
	}
	_ = l.repo.DeleteRefs(kept) // the saved work keeps what matters
	if err := l.removeOpen(); err != nil {
		return nil, gitstore.ZeroHash, err
	}
	return c, saved, nil
}

// journaledSave is the saved work the journal's record of cycle id names,
// if the journal has that record (an abort an older git-evolve made).
func journaledSave(recs []ledger.Record, id string) (gitstore.Hash, bool) {
	for _, r := range recs {
		var s string
		if r.ID == id && json.Unmarshal(r.Extra["saved"], &s) == nil {
			if h, err := gitstore.ParseHash(s); err == nil {
				return h, true
			}
		}
	}
	return gitstore.ZeroHash, false
}

func (l *Ledger) refOrZero(ref string) gitstore.Hash {
	h, ok, err := l.repo.RefHash(ref)
	if err != nil || !ok {
		return gitstore.ZeroHash
	}
	return h
}

func hasID(recs []ledger.Record, id string) bool {
	for _, r := range recs {
		if r.ID == id {
			return true
		}
	}
	return false
}

func mustParse(s string) gitstore.Hash {
	h, _ := gitstore.ParseHash(s)
	return h
}

func mustJSON(v any) json.RawMessage { return ledger.Value(v) }

// reserved returns the cycle numbers open cycles hold, by number. A
// reservation whose start ref is gone (a start that crashed before it, a
// cycle whose worktree was removed and its ref deleted) holds nothing. The
// cycles open in every worktree hold their numbers too, so that a damaged
// or lost reservation file never lets two cycles take one number.
func (l *Ledger) reserved() (map[int]string, error) {
	out := map[int]string{}
	open, _ := l.openCycles() // one that does not read is its worktree's to report
	for _, c := range open {
		if _, ok, err := l.repo.RefHash(StartRef(c.ID)); err == nil && ok {
			out[c.Cycle] = c.ID // (a worktree removed by hand keeps none)
		}
	}
	data, err := os.ReadFile(l.reservedPath())
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		n, id, _ := strings.Cut(line, " ")
		c, err := strconv.Atoi(n)
		if err != nil || c <= 0 {
			continue // damaged: the open cycles above still hold theirs
		}
		if _, ok, err := l.repo.RefHash(StartRef(id)); err == nil && ok {
			out[c] = id
		}
	}
	return out, nil
}

// release gives back the number an open cycle reserved.
func (l *Ledger) release(id string) error {
	data, err := os.ReadFile(l.reservedPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var kept []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if _, lid, _ := strings.Cut(line, " "); line != "" && lid != id {
			kept = append(kept, line)
		}
	}
	out := strings.Join(kept, "\n")
	if out != "" {
		out += "\n"
	}
	return writeFileAtomic(l.reservedPath(), []byte(out))
}

// nextFree is the next cycle number: past everything in the ledger, the
// journal and the reservations of open cycles.
func nextFree(ix *store.Index, journal []ledger.Record, reserved map[int]string) int {
	n := ix.Max()
	for _, r := range journal {
		n = max(n, r.Cycle)
	}
	for c := range reserved {
		n = max(n, c)
	}
	return n + 1
}

func newID() string {
	b := make([]byte, 10)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// TranscriptRef keeps the transcript of cycle id's agent (see loop): a
// blob, kept after the cycle closes.
func TranscriptRef(id string) string { return TranscriptsPrefix + id }

// TranscriptsPrefix is where the transcripts are kept.
const TranscriptsPrefix = "refs/evolve/transcripts/"

// SetFields adds fields to the record the open cycle will be recorded with
// (see OpenCycle.Fields), under the lock writers of the ledger hold.
func (l *Ledger) SetFields(fields map[string]json.RawMessage) error {
	unlock, err := filelock.Lock(l.LockPath())
	if err != nil {
		return err
	}
	defer unlock()
	c, err := l.Current()
	if err != nil {
		return err
	}
	if c.Fields == nil {
		c.Fields = map[string]json.RawMessage{}
	}
	for k, v := range fields {
		c.Fields[k] = v
	}
	return l.saveOpen(c)
}

func writeFileAtomic(path string, data []byte) error {
	return store.WriteStateFile(path, func(w *bufio.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Package queue is the work queue of evolve loops: the seeds' harvested
// follow-ups in .agents/rpi/next-work.jsonl (JSON Lines, an entry a line,
// each with items[]), and the pinned roadmap (an ordered Markdown list,
// worked in order, blockers first).
//
// Items get a stable id where they have none (a digest of what they say).
// Taking an item for a cycle claims it with a lease that expires, so that a
// crashed loop's claim does not hold the item for ever; an item is consumed
// only when its cycle improved, and released (with failed_at) when it did
// not. The file is rewritten atomically under a lock, and only the item a
// change changes is rewritten (its fields in their order, as written where
// they did not change): every other byte of the file, lines that do not
// parse included, stays. A batch (an entry) marked consumed has its items
// consumed; the batch's own fields are the seeds' and are never written.
//
// It knows nothing of git: callers give it paths.
package queue

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/filelock"
)

// Path is the queue file, relative to the top of the working tree.
const Path = ".agents/rpi/next-work.jsonl"

// The claim states of an item.
const (
	Available  = "available"
	InProgress = "in_progress"
	Consumed   = "consumed"
)

// DefaultLease is how long a claim holds an item when no lease is given.
const DefaultLease = 2 * time.Hour

// Item is one piece of work in the queue, as it reads.
type Item struct {
	ID          string   `json:"id"`
	Entry       int      `json:"entry"` // the line of its entry, 1-based
	Title       string   `json:"title"`
	Type        string   `json:"type,omitempty"`
	Severity    string   `json:"severity,omitempty"`
	Source      string   `json:"source,omitempty"`
	Description string   `json:"description,omitempty"`
	TargetRepo  string   `json:"target_repo,omitempty"`
	Status      string   `json:"status,omitempty"` // ready, proposed
	Requires    []string `json:"requires,omitempty"`
	ClaimStatus string   `json:"claim_status"`
	ClaimedBy   string   `json:"claimed_by,omitempty"`
	ClaimedAt   string   `json:"claimed_at,omitempty"`
	LeaseUntil  string   `json:"claim_expires_at,omitempty"`
	Consumed    bool     `json:"consumed"`
	ConsumedBy  string   `json:"consumed_by,omitempty"`
	ConsumedAt  string   `json:"consumed_at,omitempty"`
	FailedAt    string   `json:"failed_at,omitempty"`
	// Expired says a claim's lease has run out: the item is available again.
	Expired bool `json:"claim_expired,omitempty"`
}

// Selectable reports whether the item can be taken for a cycle at now: not
// consumed, not claimed (or its lease run out), ready (or without status)
// and needing no review.
func (it *Item) Selectable() bool {
	return !it.Consumed && it.ClaimStatus != Consumed && (it.ClaimStatus != InProgress || it.Expired) &&
		(it.Status == "" || it.Status == "ready") && len(it.Requires) == 0
}

// Queue is a queue file and the lock that guards its rewrites.
type Queue struct {
	path, lock string
	now        func() time.Time
}

// Open returns the queue in file path, rewritten under lockPath.
func Open(path, lockPath string, now func() time.Time) *Queue {
	return &Queue{path: path, lock: lockPath, now: now}
}

// Path is the queue's file.
func (q *Queue) Path() string { return q.path }

// line is one line of the file: an entry, or text kept as it is.
type line struct {
	raw   []byte
	entry map[string]json.RawMessage
	items []map[string]json.RawMessage
	edits map[int][]byte // the items rewritten, by index: their new text
}

func (q *Queue) read() ([]*line, error) {
	data, err := os.ReadFile(q.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the work queue: %w", err)
	}
	var lines []*line
	for _, raw := range bytes.SplitAfter(data, []byte("\n")) {
		if len(raw) == 0 {
			continue
		}
		ln := &line{raw: raw}
		if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' {
			var entry map[string]json.RawMessage
			if json.Unmarshal(t, &entry) == nil {
				var items []map[string]json.RawMessage
				if json.Unmarshal(entry["items"], &items) == nil || entry["items"] == nil {
					ln.entry, ln.items = entry, items
				}
			}
		}
		lines = append(lines, ln)
	}
	return lines, nil
}

func str(m map[string]json.RawMessage, k string) string {
	var s string
	_ = json.Unmarshal(m[k], &s)
	return s
}

// itemID is an item's id: its own, or a digest of what it says.
// assignIDs gives each item of lines its id, by line and item: its own
// when it has one; else the digest of what it says, with -2, -3, … for
// the second and later items that say the same (or have the same id of
// their own), skipping the ids items have of their own (so that an id written into one twin when it is
// claimed does not move its other twins' ids).
func assignIDs(lines []*line) [][]string {
	used := map[string]bool{}
	for _, ln := range lines {
		for _, m := range ln.items {
			if id := str(m, "id"); id != "" {
				used[id] = true
			}
		}
	}
	next := map[string]int{}
	taken := map[string]bool{} // the own ids given out so far
	out := make([][]string, len(lines))
	for i, ln := range lines {
		out[i] = make([]string, len(ln.items))
		for j, m := range ln.items {
			base := str(m, "id")
			if base != "" && !taken[base] {
				taken[base] = true
				out[i][j] = base
				continue
			}
			if base == "" {
				base = itemID(m)
			} else {
				next[base] = max(next[base], 1) // a second item with this id of its own
			}
			id := base
			for n := next[base]; ; n++ {
				if n > 0 {
					id = fmt.Sprintf("%s-%d", base, n+1)
				}
				if !used[id] {
					next[base] = n + 1
					break
				}
			}
			used[id] = true
			out[i][j] = id
		}
	}
	return out
}

func itemID(m map[string]json.RawMessage) string {
	if id := str(m, "id"); id != "" {
		return id
	}
	sum := sha256.Sum256([]byte(str(m, "title") + "\x00" + str(m, "type") + "\x00" + str(m, "source") + "\x00" + str(m, "description")))
	return "q" + hex.EncodeToString(sum[:5])
}

// item reads item m of entry (the line number) from batch, the entry's
// own fields: a batch marked consumed has its items consumed.
func (q *Queue) item(m, batch map[string]json.RawMessage, entry int, now time.Time) Item {
	it := Item{ID: itemID(m), Entry: entry, Title: str(m, "title"), Type: str(m, "type"), Severity: str(m, "severity"),
		Source: str(m, "source"), Description: str(m, "description"), TargetRepo: str(m, "target_repo"), Status: str(m, "status"),
		ClaimStatus: str(m, "claim_status"), ClaimedBy: str(m, "claimed_by"), ClaimedAt: str(m, "claimed_at"),
		LeaseUntil: str(m, "claim_expires_at"), ConsumedBy: str(m, "consumed_by"), ConsumedAt: str(m, "consumed_at"),
		FailedAt: str(m, "failed_at")}
	_ = json.Unmarshal(m["requires"], &it.Requires)
	_ = json.Unmarshal(m["consumed"], &it.Consumed)
	var batchDone bool
	if _ = json.Unmarshal(batch["consumed"], &batchDone); batchDone && !it.Consumed {
		it.Consumed, it.ClaimStatus = true, Consumed
		it.ClaimedBy, it.ClaimedAt, it.LeaseUntil = "", "", ""
		if it.ConsumedBy == "" {
			it.ConsumedBy = str(batch, "consumed_by")
		}
		if it.ConsumedAt == "" {
			it.ConsumedAt = str(batch, "consumed_at")
		}
	}
	if it.ClaimStatus == "" {
		it.ClaimStatus = Available
		if it.Consumed {
			it.ClaimStatus = Consumed
		}
	}
	if it.ClaimStatus == InProgress {
		lease := DefaultLease
		until, err := time.Parse(time.RFC3339, it.LeaseUntil)
		if err != nil {
			if at, err := time.Parse(time.RFC3339, it.ClaimedAt); err == nil {
				until = at.Add(lease) // the seeds' claims have no lease: the default from the claim
				it.LeaseUntil = until.UTC().Format(time.RFC3339)
			} else {
				until = time.Time{} // a claim with no time holds nothing
			}
		}
		it.Expired = !now.Before(until)
	}
	return it
}

// List returns the queue's items in file order, and the numbers of the
// lines that are not entries (kept as they are).
func (q *Queue) List() ([]Item, []int, error) {
	lines, err := q.read()
	if err != nil {
		return nil, nil, err
	}
	now := q.now()
	var items []Item
	var bad []int
	ids := assignIDs(lines)
	for i, ln := range lines {
		if ln.entry == nil {
			if len(bytes.TrimSpace(ln.raw)) > 0 {
				bad = append(bad, i+1)
			}
			continue
		}
		for j, m := range ln.items {
			it := q.item(m, ln.entry, i+1, now)
			it.ID = ids[i][j]
			items = append(items, it)
		}
	}
	return items, bad, nil
}

// ErrNotFound is returned for an item id the queue does not have.
var ErrNotFound = errors.New("no such item in the work queue")

// Refusal is a queue change that cannot be made as asked.
type Refusal struct{ Msg string }

func (e *Refusal) Error() string { return e.Msg }

// update rewrites the item id under the lock: fn changes its fields (a
// nil value removes one) and returns an error to change nothing. Only that
// item's text changes, and only the fields set to something new in it: the
// rest of the file is written back byte for byte.
func (q *Queue) update(id string, fn func(it Item, set func(k string, v any)) error) (Item, error) {
	unlock, err := filelock.Lock(q.lock)
	if err != nil {
		return Item{}, err
	}
	defer unlock()
	lines, err := q.read()
	if err != nil {
		return Item{}, err
	}
	now := q.now()
	ids := assignIDs(lines)
	for i, ln := range lines {
		for j, m := range ln.items {
			if ids[i][j] != id {
				continue
			}
			it := q.item(m, ln.entry, i+1, now)
			changes := map[string]json.RawMessage{}
			var order []string
			set := func(k string, v any) {
				old, had := m[k]
				var nv json.RawMessage
				if v != nil {
					nv = marshal(v)
				}
				if (v == nil && !had) || (v != nil && had && bytes.Equal(old, nv)) {
					return
				}
				if _, seen := changes[k]; !seen {
					order = append(order, k)
				}
				changes[k] = nv
				if v == nil {
					delete(m, k)
				} else {
					m[k] = nv
				}
			}
			if err := fn(it, set); err != nil {
				return Item{}, err
			}
			if len(changes) == 0 {
				return it, nil
			}
			if str(m, "id") == "" {
				set("id", id) // the id it was known by, from now on its own
			}
			elems, err := arrayElems(ln.entry["items"])
			if err != nil || j >= len(elems) {
				return Item{}, fmt.Errorf("reading line %d of the work queue: %v", i+1, err)
			}
			old := ln.entry["items"][elems[j].start:elems[j].end]
			text, err := editObject(old, changes, order)
			if err != nil {
				return Item{}, fmt.Errorf("rewriting item %s on line %d of the work queue: %v", id, i+1, err)
			}
			ln.edits = map[int][]byte{j: text}
			if err := q.write(lines); err != nil {
				return Item{}, err
			}
			return q.item(m, ln.entry, i+1, now), nil
		}
	}
	return Item{}, fmt.Errorf("%w: %s", ErrNotFound, id)
}

// write replaces the file atomically: a temporary file beside it, synced,
// renamed over it. Lines nothing changed are written as they were, and
// in the lines with an item changed, everything but that item.
func (q *Queue) write(lines []*line) error {
	var buf bytes.Buffer
	for _, ln := range lines {
		raw := ln.raw
		if ln.edits != nil {
			var err error
			if raw, err = editLine(ln.raw, ln.edits); err != nil {
				return fmt.Errorf("writing the work queue: %w", err)
			}
		}
		buf.Write(raw)
		if !bytes.HasSuffix(raw, []byte("\n")) {
			buf.WriteByte('\n')
		}
	}
	dir := filepath.Dir(q.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".next-work-*")
	if err != nil {
		return err
	}
	mode := os.FileMode(0o644) // CreateTemp makes it 0600: the file keeps its own mode
	if fi, serr := os.Stat(q.path); serr == nil {
		mode = fi.Mode().Perm()
	}
	_, err = tmp.Write(buf.Bytes())
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), q.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the work queue: %w", err)
	}
	return nil
}

// Claim takes an item for by (for example "evolve:cycle-12") for lease: it
// is in progress until then, or until it is consumed or released. An item
// someone else holds (and whose lease has not run out), or one consumed, is
// refused.
func (q *Queue) Claim(id, by string, lease time.Duration) (Item, error) {
	if lease <= 0 {
		lease = DefaultLease
	}
	return q.update(id, func(it Item, set func(string, any)) error {
		switch {
		case it.Consumed || it.ClaimStatus == Consumed:
			return &Refusal{fmt.Sprintf("item %s is consumed already (by %s)", id, it.ConsumedBy)}
		case it.ClaimStatus == InProgress && !it.Expired && it.ClaimedBy != by:
			if it.LeaseUntil == "" {
				return &Refusal{fmt.Sprintf("item %s is claimed by %s", id, it.ClaimedBy)}
			}
			return &Refusal{fmt.Sprintf("item %s is claimed by %s until %s", id, it.ClaimedBy, it.LeaseUntil)}
		}
		now := q.now().UTC()
		set("claim_status", InProgress)
		set("claimed_by", by)
		set("claimed_at", now.Format(time.RFC3339))
		set("claim_expires_at", now.Add(lease).Format(time.RFC3339))
		return nil
	})
}

// Consume marks an item done by by: its cycle improved.
func (q *Queue) Consume(id, by string) (Item, error) {
	return q.update(id, func(it Item, set func(string, any)) error {
		if it.Consumed {
			return nil // again: nothing changes
		}
		set("consumed", true)
		set("claim_status", Consumed)
		set("consumed_by", by)
		set("consumed_at", q.now().UTC().Format(time.RFC3339))
		set("claimed_by", nil)
		set("claimed_at", nil)
		set("claim_expires_at", nil)
		return nil
	})
}

// Release gives an item back: available, its claim cleared, and failed_at
// set when its cycle failed. Whoever holds the claim (an operator's
// override); ReleaseFor gives back one claimant's own.
func (q *Queue) Release(id string, failed bool) (Item, error) {
	return q.release(id, "", failed)
}

// ReleaseFor gives back by's claim on an item, as Release does; a live
// claim someone else holds now (by's lease ran out, and another took the
// item) is theirs, and is refused.
func (q *Queue) ReleaseFor(id, by string, failed bool) (Item, error) {
	return q.release(id, by, failed)
}

// release gives item id back; by, when given, must hold its claim unless
// the claim's lease ran out.
func (q *Queue) release(id, by string, failed bool) (Item, error) {
	return q.update(id, func(it Item, set func(string, any)) error {
		if by != "" && it.ClaimStatus == InProgress && it.ClaimedBy != by && !it.Expired {
			return &Refusal{fmt.Sprintf("item %s is claimed by %s now, not by %s", id, it.ClaimedBy, by)}
		}
		if it.Consumed {
			return &Refusal{fmt.Sprintf("item %s is consumed: there is no claim to release", id)}
		}
		if it.ClaimStatus != Available { // one with no claim_status is available as it is
			set("claim_status", Available)
		}
		set("claimed_by", nil)
		set("claimed_at", nil)
		set("claim_expires_at", nil)
		if failed {
			set("failed_at", q.now().UTC().Format(time.RFC3339))
		}
		return nil
	})
}

// SeverityRank orders severities, highest first.
func SeverityRank(s string) int {
	switch strings.ToLower(s) {
	case "high", "critical":
		return 0
	case "medium":
		return 1
	case "low":
		return 2
	}
	return 3
}

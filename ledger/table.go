package ledger

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
)

// tableFields are the members a listing shows (git evolve log's table):
// TableRecord reads these alone.
var tableFields = map[string]bool{"v": true, "id": true, "cycle": true, "target": true, "result": true, "sha": true,
	"canonical_sha": true, "timestamp": true, "goals_passing": true, "goals_total": true, "goal_ids": true,
	"recorded_by": true, "host": true, "anchored": true, "aborted": true,
	// What the result column says of a finished cycle: it changed files
	// of its ruler; its target did not move (Record.TargetUnmoved).
	"ruler_changed": true, "ruler_accepted": true, "target_before": true, "target_after": true, "score": true, "before": true}

// memberBufs are the slices TableRecord scans lines into: a listing of
// 100,000 records reads them one after another, with one slice.
var memberBufs = sync.Pool{New: func() any { b := make([]member, 0, 32); return &b }}

// TableRecord reads from a line in canonical form (as the saved view holds
// them) the fields a listing shows: v, id, cycle, target, result, sha,
// canonical_sha, timestamp, goals_passing, goals_total and goal_ids, and
// recorded_by, host, anchored, aborted, ruler_changed, ruler_accepted,
// target_before, target_after, score and before in Extra (as written: not
// checked). The other fields are left empty: the record is for showing,
// never for writing. A line that is not canonical is read whole by Parse.
func TableRecord(line []byte) (Record, error) {
	buf := memberBufs.Get().(*[]member)
	defer memberBufs.Put(buf)
	_, members, ok := summarize(line, (*buf)[:0], true)
	if !ok {
		return Parse(line)
	}
	*buf = members[:0]
	var r Record
	for _, m := range members {
		name := string(m.name(line))
		if !tableFields[name] {
			continue
		}
		v := line[m.start:m.end]
		str := func(dst *string) bool {
			if len(v) < 2 || v[0] != '"' {
				return false
			}
			*dst = decodeString(v, bytes.IndexByte(v, '\\') >= 0)
			return true
		}
		num := func(dst *int) bool {
			n, err := strconv.Atoi(string(v))
			*dst = n
			return err == nil
		}
		ok := true
		switch name {
		case "v":
			ok = num(&r.V)
		case "cycle":
			ok = num(&r.Cycle)
		case "id":
			ok = str(&r.ID)
		case "target":
			ok = str(&r.Target)
		case "result":
			ok = str(&r.Result)
		case "sha":
			ok = str(&r.SHA)
		case "canonical_sha":
			ok = str(&r.CanonicalSHA)
		case "timestamp":
			ok = str(&r.Timestamp)
		case "goals_passing":
			r.GoalsPassing = new(int)
			ok = num(r.GoalsPassing)
		case "goals_total":
			r.GoalsTotal = new(int)
			ok = num(r.GoalsTotal)
		case "goal_ids":
			ok = json.Unmarshal(v, &r.GoalIDs) == nil
		default: // recorded_by, host, anchored, aborted, …
			if r.Extra == nil {
				r.Extra = map[string]json.RawMessage{}
			}
			r.Extra[name] = json.RawMessage(v)
		}
		if !ok {
			return Parse(line) // Parse says what is wrong with it
		}
	}
	return r, nil
}

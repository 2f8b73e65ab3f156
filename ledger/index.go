package ledger

import "strconv"

// IndexName is the non-note directory at the root of the ledger's notes
// tree that lists each commit whose note holds a record under the record's
// cycle number (CycleKey), each commit whose note holds a quarantine
// record under QuarantineKey, and each commit whose note holds a line that
// is no record under BadKey: a first `show N`, `log -n N` or `status`
// reads a few trees and the notes it shows, not every note. Its name is
// not hex, so git keeps it and never mistakes it for a note; its version
// is in its name, so that another layout is another directory. What it
// lists is derived from the notes alone (IndexKeys), and a reader takes it
// only for the notes it says it describes.
const IndexName = "evolve-cycles.v2"

// OldIndexNames are the directories of the layouts before IndexName's
// (evolve-cycles.v1 listed no quarantine records): nothing reads them,
// and each write of the ledger takes them out of the tree.
var OldIndexNames = []string{"evolve-cycles.v1"}

// CycleKey is where the index lists the commits whose note holds a record
// of cycle n: "<n/10000>/<n/100>/<n>", so that no directory of it holds
// more than 100 cycles, and a record rewrites three small trees.
func CycleKey(n int) string {
	return strconv.Itoa(n/10000) + "/" + strconv.Itoa(n/100) + "/" + strconv.Itoa(n)
}

// BadKey is where the index lists the commits whose note holds a line
// that is no record: a cycle's listing names them, as a full read does.
const BadKey = "bad/line"

// QuarantineKey is where the index lists the commits whose note holds a
// quarantine record: the goals set aside, which the loop's rules and
// status read beside the last few records.
const QuarantineKey = "result/quarantined"

// IndexKeys are the keys the index lists a note under: the cycle of each
// record (a line Summarize or Parse reads, as every reader of the ledger
// reads its lines; a negative cycle no query names is left out),
// QuarantineKey when a record is a quarantine record, and BadKey when a
// line is no record.
func IndexKeys(note []byte) []string {
	var keys []string
	seen := map[string]bool{}
	bad := false
	EachLine(note, func(_ int, line []byte) {
		sum, ok := Summarize(line)
		if !ok {
			r, err := Parse(line)
			if err != nil {
				bad = true
				return
			}
			sum = SummaryOf(&r)
		}
		for _, k := range SummaryKeys(&sum) {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	})
	if bad {
		keys = append(keys, BadKey)
	}
	return keys
}

// SummaryKeys are the keys the index lists the note of a record under:
// its cycle (none when it is negative), and QuarantineKey for a
// quarantine record.
func SummaryKeys(s *Summary) []string {
	var keys []string
	if s.Cycle >= 0 {
		keys = append(keys, CycleKey(s.Cycle))
	}
	if string(s.Result) == Quarantined {
		keys = append(keys, QuarantineKey)
	}
	return keys
}

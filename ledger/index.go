package ledger

import "strconv"

// IndexName is the non-note directory at the root of the ledger's notes
// tree that lists each commit whose note holds a record under the record's
// cycle number (CycleKey), and each commit whose note holds a line that is
// no record under BadKey: a first `show N` reads a few trees, not every
// note. Its name is not hex, so git keeps it and never mistakes it for a
// note; its version is in its name, so that another layout is another
// directory. What it lists is derived from the notes alone (IndexKeys),
// and a reader takes it only for the notes it says it describes.
const IndexName = "evolve-cycles.v1"

// CycleKey is where the index lists the commits whose note holds a record
// of cycle n: "<n/10000>/<n/100>/<n>", so that no directory of it holds
// more than 100 cycles, and a record rewrites three small trees.
func CycleKey(n int) string {
	return strconv.Itoa(n/10000) + "/" + strconv.Itoa(n/100) + "/" + strconv.Itoa(n)
}

// BadKey is where the index lists the commits whose note holds a line
// that is no record: a cycle's listing names them, as a full read does.
const BadKey = "bad/line"

// IndexKeys are the keys the index lists a note under: the cycle of each
// record (a line Summarize or Parse reads, as every reader of the ledger
// reads its lines; a negative cycle no query names is left out) and
// BadKey when a line is no record.
func IndexKeys(note []byte) []string {
	var keys []string
	seen := map[int]bool{}
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
		if sum.Cycle >= 0 && !seen[sum.Cycle] {
			seen[sum.Cycle] = true
			keys = append(keys, CycleKey(sum.Cycle))
		}
	})
	if bad {
		keys = append(keys, BadKey)
	}
	return keys
}

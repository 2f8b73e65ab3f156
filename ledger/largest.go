package ledger

import (
	"strconv"
	"strings"
)

// LargestTrailer names, in the message of a notes commit that adds
// records (git evolve record, import, relink), the largest cycle number
// the ledger holds once that commit is written. Readers with no cycle
// index take it as a bound on every note they do not read; verify checks
// that no note of the commit's ledger holds a larger cycle.
const LargestTrailer = "Evolve-Largest-Cycle"

// LargestCycle is the cycle a notes commit's message names in its
// LargestTrailer, if it names one: the last such line decides, and one
// that is not a positive decimal number of at most nine digits with no
// sign, leading zero or space names none.
func LargestCycle(message string) (int, bool) {
	if !strings.Contains(message, LargestTrailer+": ") {
		return 0, false // most messages: no line to scan
	}
	n, ok := 0, false
	for _, line := range strings.Split(message, "\n") {
		digits, found := strings.CutPrefix(line, LargestTrailer+": ")
		if !found {
			continue
		}
		v, err := strconv.Atoi(digits)
		if err != nil || len(digits) > 9 || strings.Trim(digits, "0123456789") != "" || digits[0] == '0' || v < 1 {
			n, ok = 0, false
			continue
		}
		n, ok = v, true
	}
	return n, ok
}

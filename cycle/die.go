package cycle

import (
	"os"
	"time"
)

// DieAt makes the process die, as a kill would, when a finish reaches the
// named step (judged, saved, committed, moved, checked-out, recorded), so
// that tests can check that the next finish completes what was started.
// It is for tests only: the face sets it from GIT_EVOLVE_TEST_DIE_AT.
func (l *Ledger) DieAt(step string) { l.dieAt = step }

func (l *Ledger) die(step string) {
	if l.dieAt == step {
		killSelf()
		time.Sleep(time.Minute) // the signal ends the process before this does
		os.Exit(137)
	}
}

//go:build unix

package redact

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used, all its threads: a
// benchmark's figure that other processes on a busy machine do not
// inflate as they do the wall clock's.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

//go:build !unix

package mirror

import "time"

// cpuTime is not read here: the benchmark reports no CPU figure.
func cpuTime() time.Duration { return 0 }

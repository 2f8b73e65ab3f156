//go:build !unix

package cycle

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }

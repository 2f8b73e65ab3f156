//go:build !linux

package loop

import "io"

// Without abstract unix sockets, the run's hold is its lock file: bindHold
// binds nothing, and holdBound never answers.

func bindHold(string) (io.Closer, error) { return nil, nil }

func holdBound(string) bool { return false }

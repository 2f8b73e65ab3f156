//go:build !linux

package loop

// Without abstract unix sockets, the run's hold is its lock file: bindHold
// binds nothing, holdBound never answers, and refusals reach the driver
// through run-refused.jsonl alone.

func bindHold(string) (holdSocket, error) { return nil, nil }

func holdBound(string) bool { return false }

func noteHold(string, []byte) {}

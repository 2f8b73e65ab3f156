// Command git-evolve is the harness and the shared ledger for evolve loops,
// run as `git evolve`. This package is its face: it parses the command line
// with kong, opens the repository when a command needs it, prints results
// and maps errors to the exit codes in the README. Everything else lives in
// the packages below it.
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

func main() {
	os.Exit(heapProfiled(func() int { return profiled(Main) }))
}

// heapProfiled runs f, then writes a profile of the memory f allocated to
// GIT_EVOLVE_MEMPROFILE when it is set (docs/benchmarks.md): where the
// peak of a command's memory comes from.
func heapProfiled(f func() int) int {
	path := os.Getenv("GIT_EVOLVE_MEMPROFILE")
	if path == "" {
		return f()
	}
	runtime.MemProfileRate = 64 << 10
	code := f()
	runtime.GC() // the profile counts what the last collection saw
	if out, err := os.Create(path); err == nil {
		_ = pprof.Lookup("allocs").WriteTo(out, 0)
		out.Close()
	}
	return code
}

// profiled runs f, writing a CPU profile to GIT_EVOLVE_CPUPROFILE when it
// is set (docs/benchmarks.md).
func profiled(f func() int) int {
	path := os.Getenv("GIT_EVOLVE_CPUPROFILE")
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err != nil {
		return f()
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		return f()
	}
	defer pprof.StopCPUProfile()
	return f()
}

// Main runs git-evolve with the process's arguments, environment and
// standard streams, and returns the exit code. It is the only entry point:
// nothing else exits the process.
func Main() int {
	return run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
}

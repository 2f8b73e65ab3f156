package main

import (
	"fmt"
	"runtime/debug"

	"git-evolve/ledger"
)

type versionCmd struct{}

// version is set at build time with -ldflags "-X main.version=…"; otherwise
// it comes from the module's build information.
var version = ""

func (versionCmd) Run(e *env) error {
	v := version
	if v == "" {
		v = "devel"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	fmt.Fprintf(e.stdout, "git-evolve %s (ledger schema %s, record schema v%d)\n", v, ledger.Version, ledger.SchemaMajor)
	return nil
}

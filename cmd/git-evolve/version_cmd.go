package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/git-evolve/git-evolve/internal/buildinfo"
	"github.com/git-evolve/git-evolve/ledger"
)

type versionCmd struct {
	JSON bool `name:"json" help:"Print it as one JSON object."`
}

// version is set at build time with -ldflags "-X main.version=…"; otherwise
// it comes from the module's build information.
var version = ""

// versionInfo is what git evolve version says.
type versionInfo struct {
	Version      string `json:"version"`               // the release, or "devel"
	Commit       string `json:"commit,omitempty"`      // the commit it was built from, when known
	CommitDate   string `json:"commit_date,omitempty"` // that commit's date
	Dirty        bool   `json:"dirty"`                 // built from a tree with changes not committed
	Go           string `json:"go"`
	LedgerSchema string `json:"ledger_schema"`
	RecordSchema int    `json:"record_schema"`
}

func currentVersion() versionInfo {
	st := buildinfo.Read(version)
	return versionInfo{Version: st.Version, Commit: st.Commit, CommitDate: st.CommitDate, Dirty: st.Dirty,
		Go: runtime.Version(), LedgerSchema: ledger.Version.String(), RecordSchema: ledger.SchemaMajor}
}

// String is the version line: the release (or devel), then the commit,
// its date and "dirty" when known, and the schemas.
func (v versionInfo) String() string {
	var about []string
	if v.Commit != "" {
		c := v.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		about = append(about, "commit "+c)
	}
	if v.CommitDate != "" {
		about = append(about, v.CommitDate)
	}
	if v.Dirty {
		about = append(about, "dirty")
	}
	about = append(about, "ledger schema "+v.LedgerSchema, fmt.Sprintf("record schema v%d", v.RecordSchema))
	return fmt.Sprintf("git-evolve %s (%s)", v.Version, strings.Join(about, ", "))
}

func (c versionCmd) Run(e *env) error {
	v := currentVersion()
	if c.JSON {
		return json.NewEncoder(e.stdout).Encode(v)
	}
	_, err := fmt.Fprintln(e.stdout, v)
	return err
}

// versionFlag is git evolve --version: the version line, as git --version
// gives git's.
type versionFlag bool

// BeforeReset prints the version line and ends the run, before any command
// is asked for.
func (versionFlag) BeforeReset(app *kong.Kong) error {
	fmt.Fprintln(app.Stdout, currentVersion())
	app.Exit(0)
	return nil
}

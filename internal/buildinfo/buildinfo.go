// Package buildinfo says which build a program is: the release it was
// stamped with, else the module's version, and the commit, its date and
// whether the tree had changes, from the build's VCS stamp (go build, go
// install and a release build carry it; go run does not).
package buildinfo

import "runtime/debug"

// Stamp is what the build says of itself.
type Stamp struct {
	Version    string // the release, the module's version, or "devel"
	Commit     string // the commit it was built from, when known
	CommitDate string // that commit's date
	Dirty      bool   // built from a tree with changes not committed
}

// Read is the stamp of this program; release, when not empty, is the
// version a release build set (-ldflags -X).
func Read(release string) Stamp {
	s := Stamp{Version: release}
	bi, ok := debug.ReadBuildInfo()
	if s.Version == "" {
		s.Version = "devel"
		if ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			s.Version = bi.Main.Version
		}
	}
	if !ok {
		return s
	}
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			s.Commit = kv.Value
		case "vcs.time":
			s.CommitDate = kv.Value
		case "vcs.modified":
			s.Dirty = kv.Value == "true"
		}
	}
	return s
}

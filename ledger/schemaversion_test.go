package ledger

import (
	"testing"

	"github.com/Masterminds/semver/v3"
)

// seedVersions are versions and near-versions for the tests and the fuzzer.
var seedVersions = []string{
	"1.1.0", "1.1.1", "1.2.0", "2.0.0", "0.9.0", "1.1.0-rc.1", "1.1.0-rc.2", "1.1.0-rc.10",
	"1.1.0-alpha", "1.1.0-alpha.1", "1.1.0-alpha.beta", "1.1.0-beta", "1.1.0-1", "1.1.0-01",
	"1.1.0+build.7", "1.1.0-rc.1+b", "1.1.0+", "1.1.0-", "01.1.0", "1.1", "v1.1.0", "1.1.0.0",
	"", "latest", "1.1.0-x-y", "1.1.0-a..b", "18446744073709551616.0.0", "1.1.0-99999999999999999999",
	"1.1.0-9.10", "1.1.0-A", "1.1.0-a", " 1.1.0", "1.1.0 ",
}

// What is a version, and the order of two, are Masterminds/semver's answers
// (its strict reading), which this reader replaces in the binary.
func TestSchemaVersionAsSemver(t *testing.T) {
	for _, a := range seedVersions {
		for _, b := range seedVersions {
			checkAsSemver(t, a, b)
		}
	}
}

func checkAsSemver(t *testing.T, a, b string) {
	t.Helper()
	va, okA := ParseSchemaVersion(a)
	sa, errA := semver.StrictNewVersion(a)
	if okA != (errA == nil) {
		t.Fatalf("ParseSchemaVersion(%q) ok = %v; semver: %v", a, okA, errA)
	}
	vb, okB := ParseSchemaVersion(b)
	sb, errB := semver.StrictNewVersion(b)
	if !okA || !okB || errB != nil {
		return
	}
	if got, want := va.Compare(vb), sa.Compare(sb); got != want {
		t.Fatalf("Compare(%q, %q) = %d, semver gives %d", a, b, got, want)
	}
	if va.String() != a {
		t.Fatalf("String() = %q, want %q", va.String(), a)
	}
}

func FuzzSchemaVersion(f *testing.F) {
	for _, s := range seedVersions {
		f.Add(s, "1.1.0")
	}
	f.Fuzz(func(t *testing.T, a, b string) { checkAsSemver(t, a, b) })
}

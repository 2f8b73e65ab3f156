package ledger

import (
	"strconv"
	"strings"
)

// SchemaVersion is a semantic version (semver 2.0.0: MAJOR.MINOR.PATCH, an
// optional -pre-release and +build metadata), as a ledger's marker names
// its schema. It is read here, not with a semver library, because only the
// strict form and its order are needed, and a library that compiles its
// patterns when the process starts cost every command about 2 ms
// (docs/benchmarks.md); a fuzz test holds this reader to the library's
// answers.
type SchemaVersion struct {
	major, minor, patch uint64
	pre                 []string // pre-release identifiers
	text                string   // as written
}

// ParseSchemaVersion reads a version in semver 2.0.0's strict form (no "v",
// no missing parts, no leading zeros in numbers), of at most 256 bytes.
func ParseSchemaVersion(s string) (SchemaVersion, bool) {
	v := SchemaVersion{text: s}
	if len(s) > 256 {
		return v, false
	}
	core, build, hasBuild := strings.Cut(s, "+")
	if hasBuild && !identifiers(build, false) {
		return v, false
	}
	core, pre, hasPre := strings.Cut(core, "-")
	if hasPre {
		if !identifiers(pre, true) {
			return v, false
		}
		v.pre = strings.Split(pre, ".")
	}
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return v, false
	}
	var nums [3]uint64
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if !numeric(p) || err != nil {
			return v, false
		}
		nums[i] = n
	}
	v.major, v.minor, v.patch = nums[0], nums[1], nums[2]
	return v, true
}

// identifiers reports whether s is dot-separated non-empty identifiers of
// [0-9A-Za-z-]; pre-release ones that are numeric have no leading zero.
func identifiers(s string, pre bool) bool {
	for _, id := range strings.Split(s, ".") {
		if id == "" || strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") != "" {
			return false
		}
		if pre && isDigits(id) && !numeric(id) {
			return false
		}
	}
	return true
}

func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// numeric is a number as semver writes one: digits, no leading zero.
func numeric(s string) bool { return isDigits(s) && (s == "0" || s[0] != '0') }

// Compare orders versions by semver precedence: -1, 0 or 1 as v is below,
// equal to or above w (build metadata does not count).
func (v SchemaVersion) Compare(w SchemaVersion) int {
	for _, d := range [][2]uint64{{v.major, w.major}, {v.minor, w.minor}, {v.patch, w.patch}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(v.pre) == 0 && len(w.pre) == 0:
		return 0
	case len(v.pre) == 0:
		return 1 // a release is above its pre-releases
	case len(w.pre) == 0:
		return -1
	}
	for i := 0; i < len(v.pre) && i < len(w.pre); i++ {
		if c := comparePre(v.pre[i], w.pre[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(v.pre) < len(w.pre):
		return -1
	case len(v.pre) > len(w.pre):
		return 1
	}
	return 0
}

// comparePre orders two pre-release identifiers: numbers by value, below
// any alphanumeric one, which are in ASCII order.
func comparePre(a, b string) int {
	an, bn := isDigits(a), isDigits(b)
	switch {
	case an && bn:
		// no leading zeros: the longer number is the larger
		if len(a) != len(b) {
			if len(a) < len(b) {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	case an:
		return -1
	case bn:
		return 1
	}
	return strings.Compare(a, b)
}

// String is the version as written.
func (v SchemaVersion) String() string { return v.text }

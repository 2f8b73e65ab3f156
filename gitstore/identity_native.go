package gitstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ParseDate reads the date formats scripts give git most often: git's
// internal "@1700000000 +0200" (or without the @), RFC 3339 / ISO 8601
// (in local time without a zone, as git reads it), and RFC 2822. ok is
// false for anything else (git accepts more: callers that must match git
// exactly then ask git).
func ParseDate(s string) (t time.Time, ok bool) {
	s = strings.TrimSpace(s)
	if f := strings.Fields(strings.TrimPrefix(s, "@")); len(f) == 2 {
		secs, err := strconv.ParseInt(f[0], 10, 64)
		z := f[1]
		if err == nil && len(z) == 5 && (z[0] == '+' || z[0] == '-') && isDigits(z[1:]) {
			hh, _ := strconv.Atoi(z[1:3])
			mm, _ := strconv.Atoi(z[3:5])
			off := (hh*60 + mm) * 60
			if z[0] == '-' {
				off = -off
			}
			return time.Unix(secs, 0).In(time.FixedZone("", off)), true
		}
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02 15:04:05 -0700", time.RFC1123Z, "Mon, 2 Jan 2006 15:04:05 -0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// xdgGitFile is where git looks for a file of the user's:
// $XDG_CONFIG_HOME/git/name, else ~/.config/git/name; "" without either.
func xdgGitFile(name string) string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", name)
	}
	if h := os.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "git", name)
	}
	return ""
}

// systemFilesInEtc reports whether the git on PATH is the system's (in
// /usr/bin or /bin), whose system-wide files (gitconfig, gitattributes) are
// in /etc. Run by git, git-evolve finds git in git's exec path first
// (/usr/lib/git-core, /usr/libexec/git-core), which is the same install.
func systemFilesInEtc() bool {
	git, err := exec.LookPath("git")
	if err != nil {
		return false
	}
	switch filepath.Dir(git) {
	case "/usr/bin", "/bin", "/usr/lib/git-core", "/usr/libexec/git-core":
		return true
	}
	return false
}

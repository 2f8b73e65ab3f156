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

// nativeIdentity resolves author and committer as git var would, without
// running git, when that can be done exactly: names and emails from the
// environment or from plain config files, dates from the environment in a
// format ParseDate reads, or now. ok is false otherwise (config includes,
// -c or GIT_CONFIG_* settings, quoted values, a system config this cannot
// find, no identity configured, another date format), and git var decides.
func nativeIdentity(commonDir, gitDir string) (author, committer Signature, ok bool) {
	for _, v := range []string{"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG"} {
		if os.Getenv(v) != "" {
			return author, committer, false
		}
	}
	cfg := map[string]string{}
	for _, p := range configFiles(commonDir, gitDir) {
		if p == "" {
			return author, committer, false
		}
		if !readPlainConfig(p, cfg) {
			return author, committer, false
		}
	}
	now := time.Now()
	pick := func(role string) (Signature, bool) {
		up := strings.ToUpper(role)
		name, email := envOr("GIT_"+up+"_NAME", ""), envOr("GIT_"+up+"_EMAIL", "")
		if name == "" {
			name = firstSet(cfg[role+".name"], cfg["user.name"])
		}
		if email == "" {
			email = firstSet(cfg[role+".email"], cfg["user.email"], os.Getenv("EMAIL"))
		}
		if name == "" || email == "" || crude(name) || crude(email) {
			return Signature{}, false
		}
		when := now
		if d, set := os.LookupEnv("GIT_" + up + "_DATE"); set {
			t, ok := ParseDate(d)
			if !ok {
				return Signature{}, false
			}
			when = t
		}
		return Signature{Name: name, Email: email, When: when}, true
	}
	a, okA := pick("author")
	c, okC := pick("committer")
	return a, c, okA && okC
}

// envOr returns the variable's value; a variable set but empty is treated
// as unset only when def is "".
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// crude reports a value git would clean before using it (it strips
// whitespace and punctuation from the ends, and refuses angle brackets and
// newlines): git var decides those.
func crude(s string) bool {
	const crud = " \t.,:;<>\"\\'"
	return strings.ContainsAny(s, "<>\n") || strings.ContainsRune(crud, rune(s[0])) ||
		strings.ContainsRune(crud, rune(s[len(s)-1]))
}

func firstSet(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// configFiles lists git's config files in the order git reads them (later
// ones win). An empty path means a file git reads that this cannot find.
func configFiles(commonDir, gitDir string) []string {
	var files []string
	switch {
	case os.Getenv("GIT_CONFIG_NOSYSTEM") != "":
	case os.Getenv("GIT_CONFIG_SYSTEM") != "":
		files = append(files, os.Getenv("GIT_CONFIG_SYSTEM"))
	default:
		// git's system config is $(prefix)/etc/gitconfig, /etc/gitconfig
		// for a git in /usr/bin. A git elsewhere may read another one.
		if !systemFilesInEtc() {
			git, _ := exec.LookPath("git")
			prefix := filepath.Dir(filepath.Dir(git))
			if _, err := os.Stat(filepath.Join(prefix, "etc", "gitconfig")); err == nil {
				return []string{""}
			}
		}
		files = append(files, "/etc/gitconfig")
	}
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		files = append(files, g)
	} else {
		if f := xdgGitFile("config"); f != "" {
			files = append(files, f)
		}
		if home := os.Getenv("HOME"); home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	files = append(files, filepath.Join(commonDir, "config"))
	if wc := filepath.Join(gitDir, "config.worktree"); fileExists(wc) {
		// git reads it only with extensions.worktreeConfig on.
		switch on, ok := worktreeConfigOn(commonDir); {
		case !ok:
			files = append(files, "")
		case on:
			files = append(files, wc)
		}
	}
	return files
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

// worktreeConfigOn reports whether the repository's config sets
// extensions.worktreeConfig; ok is false when it cannot tell as git does.
func worktreeConfigOn(commonDir string) (on, ok bool) {
	val, set := "", false
	_, ok = readConfig(filepath.Join(commonDir, "config"), func(section, key, v string, hasVal bool) bool {
		if strings.ToLower(section+"."+key) == "extensions.worktreeconfig" {
			val, set = v, true
			if !hasVal {
				val = "true"
			}
		}
		return true
	})
	if !ok || !set {
		return false, ok
	}
	b, known := gitBool(val)
	return b, known
}

// gitBool reads a config boolean as git does; known is false for a value
// this does not read (git reads any integer, and refuses the rest).
func gitBool(v string) (b, known bool) {
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0", "":
		return false, true
	}
	return false, false
}

// readPlainConfig adds the identity keys of a config file to cfg (a
// missing file adds nothing). It returns false for what it does not read
// exactly as git does (see readConfig).
func readPlainConfig(path string, cfg map[string]string) bool {
	_, ok := readConfig(path, func(section, key, val string, hasVal bool) bool {
		switch full := section + "." + key; full {
		case "user.name", "user.email", "author.name", "author.email", "committer.name", "committer.email":
			if !hasVal || strings.ContainsAny(val, "\"\\") {
				return false
			}
			cfg[full] = val
		}
		return true
	})
	return ok
}

// nativeConfig returns the values of keys (lowercase "section.key") as git
// would resolve them from its config files, read here, when they are plain
// (see readConfig); ok is false otherwise, and git must be asked. A key
// given without a value is a boolean: "true".
func nativeConfig(commonDir, gitDir string, keys ...string) (map[string]string, bool) {
	for _, v := range []string{"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG"} {
		if os.Getenv(v) != "" {
			return nil, false
		}
	}
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	out := map[string]string{}
	for _, p := range configFiles(commonDir, gitDir) {
		if p == "" {
			return nil, false
		}
		_, ok := readConfig(p, func(section, key, val string, hasVal bool) bool {
			full := strings.ToLower(section + "." + key)
			if !want[full] {
				return true
			}
			if !hasVal {
				val = "true"
			}
			if strings.ContainsAny(val, "\"\\") {
				return false
			}
			out[full] = val
			return true
		})
		if !ok {
			return nil, false
		}
	}
	return out, true
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

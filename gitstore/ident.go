package gitstore

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// identCache is the author and committer of the commits this process
// makes, resolved once: from the environment and the config this process
// reads anyway when that is exact (deriveIdentity), else by git var
// (strictly, as git commit resolves them), whose processes may be started
// ahead of need.
type identCache struct {
	mu                sync.Mutex
	procs             [2]*proc // git var GIT_AUTHOR_IDENT, GIT_COMMITTER_IDENT
	done              bool
	author, committer Signature
	err               error
}

// PrefetchIdentity starts resolving the identity, so that a later Identity
// does not wait for git to start: git config when the identity can come
// from it and the environment, git var when the environment already says
// that it cannot (a date written another way, GIT_CONFIG), nothing when the
// environment gives it all.
func (r *Repo) PrefetchIdentity() {
	r.ident.mu.Lock()
	defer r.ident.mu.Unlock()
	if r.ident.procs[0] != nil || r.ident.done {
		return
	}
	switch needs := identityNeeds(os.LookupEnv); needs {
	case needsGitVar:
		r.startGitVar()
	case needsConfig:
		r.PrefetchConfig()
	}
}

func (r *Repo) startGitVar() {
	for i, v := range []string{"GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"} {
		r.ident.procs[i] = startGitAsync(r.dir, r.env, false, "var", v)
	}
}

// Identity returns who git would record as author and committer of a commit
// made now: GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_AUTHOR_DATE and their
// GIT_COMMITTER_* twins when set, user.name and user.email from git's config
// otherwise, exactly as git commit resolves them (git var; an identity git
// would refuse, such as an empty name, is refused with git's reason). It is
// resolved once a process: the dates are those of the first resolution.
// Where the environment and the config give it plainly (deriveIdentity) it
// is made here, without git var; anything else is git var's.
func (r *Repo) Identity() (author, committer Signature, err error) {
	r.PrefetchIdentity()
	r.ident.mu.Lock()
	defer r.ident.mu.Unlock()
	if r.ident.done {
		return r.ident.author, r.ident.committer, r.ident.err
	}
	if r.ident.procs[0] == nil {
		config := func() (map[string][]string, bool) {
			r.readConfig()
			r.config.mu.Lock()
			defer r.config.mu.Unlock()
			return r.config.raw, r.config.err == nil
		}
		if a, c, ok := deriveIdentity(os.LookupEnv, config, time.Now()); ok {
			r.ident.author, r.ident.committer, r.ident.done = a, c, true
			return a, c, nil
		}
		r.startGitVar()
	}
	sigs := [2]*Signature{&r.ident.author, &r.ident.committer}
	for i, p := range r.ident.procs {
		out, perr := p.finish(nil)
		if perr == nil {
			*sigs[i], perr = parseIdent(strings.TrimSpace(string(out)))
		}
		if r.ident.err == nil && perr != nil {
			r.ident.err = fmt.Errorf("who commits: %w", perr)
		}
	}
	r.ident.procs, r.ident.done = [2]*proc{}, true
	return r.ident.author, r.ident.committer, r.ident.err
}

// CheckIdentity says whether git would take an identity for a commit made
// now: Identity's error. It leaves the identity unresolved, so that the
// commits made after a long step (a cycle start's measure of its goals)
// carry the time they are made, not the time of this check.
func (r *Repo) CheckIdentity() error {
	_, _, err := r.Identity()
	if err == nil {
		r.ident.mu.Lock()
		r.ident.done, r.ident.author, r.ident.committer = false, Signature{}, Signature{}
		r.ident.mu.Unlock()
	}
	return err
}

// What resolving the identity needs, as far as the environment tells.
const (
	needsNothing = iota // the environment gives both identities
	needsConfig         // user.name or user.email may come from the config
	needsGitVar         // only git var can say
)

// identityNeeds says what deriveIdentity will need, from the environment
// alone.
func identityNeeds(lookup func(string) (string, bool)) int {
	if _, set := lookup("GIT_CONFIG"); set {
		return needsGitVar // git config would read that file alone; git var does not
	}
	needs := needsNothing
	for _, role := range []string{"AUTHOR", "COMMITTER"} {
		for _, part := range []string{"NAME", "EMAIL"} {
			v, set := lookup("GIT_" + role + "_" + part)
			switch {
			case !set:
				needs = needsConfig
			case !plainIdent(v):
				return needsGitVar
			}
		}
		if _, ok := identDate(lookup, "GIT_"+role+"_DATE", time.Time{}); !ok {
			return needsGitVar
		}
	}
	return needs
}

// deriveIdentity is the author and committer git var would give, made from
// the environment (lookup) and, where it names no one, from git's config
// (config: git config -z --list's answer, read when needed; false when git
// could not read it), when they can be made exactly: names and emails
// given plainly (plainIdent) by GIT_AUTHOR_NAME and the like or by
// user.name and user.email, dates unset (now, in the local time zone, with
// TZ unset) or in a form whose reading is exact (identDate). ok is false,
// and git var decides, for anything else: an author.* or committer.* key,
// user.useConfigOnly, a name or email git would clean or refuse, an email
// git would guess (EMAIL, the host name), GIT_CONFIG set. A test compares
// it with git var across environments and configs.
func deriveIdentity(lookup func(string) (string, bool), config func() (map[string][]string, bool), now time.Time) (author, committer Signature, ok bool) {
	if identityNeeds(lookup) == needsGitVar {
		return author, committer, false
	}
	var cfg map[string][]string
	fromConfig := func(key string) (string, bool) {
		if cfg == nil {
			c, ok := config()
			if !ok {
				return "", false
			}
			if c == nil {
				c = map[string][]string{}
			}
			for _, k := range []string{"author.name", "author.email", "committer.name", "committer.email", "user.useconfigonly"} {
				if _, set := c[k]; set {
					return "", false
				}
			}
			cfg = c
		}
		vs := cfg[key]
		if len(vs) == 0 || !plainIdent(vs[len(vs)-1]) {
			return "", false // unset, valueless (git refuses it), or to be cleaned
		}
		return vs[len(vs)-1], true
	}
	var sigs [2]Signature
	for i, role := range []string{"AUTHOR", "COMMITTER"} {
		var parts [2]string
		for j, part := range []string{"NAME", "EMAIL"} {
			v, set := lookup("GIT_" + role + "_" + part)
			if !set {
				if v, set = fromConfig("user." + strings.ToLower(part)); !set {
					return author, committer, false
				}
			}
			parts[j] = v
		}
		when, ok := identDate(lookup, "GIT_"+role+"_DATE", now)
		if !ok {
			return author, committer, false
		}
		sigs[i] = Signature{Name: parts[0], Email: parts[1], When: when}
	}
	return sigs[0], sigs[1], true
}

// plainIdent reports whether git takes a name or an email as it is: not
// empty, no control character, no '<' or '>', and nothing at either end
// that git strips (its "crud": spaces, '.', ',', ':', ';', quotes, a
// backslash).
func plainIdent(s string) bool {
	if s == "" || strings.ContainsAny(s, "<>") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return false
		}
	}
	const crud = " .,:;<>\"'\\"
	return !strings.ContainsRune(crud, rune(s[0])) && !strings.ContainsRune(crud, rune(s[len(s)-1]))
}

// identDate is the date git gives an identity from the variable name:
// now (to the second, in the local time zone) when it is unset or empty
// and TZ is unset; the date it names when that is git's own
// "@<seconds> <+|-><hhmm>" or an RFC 3339 time with its zone
// ("2006-01-02T15:04:05Z", "…+02:00", "…-0130"). ok is false for any
// other form, which git var reads.
func identDate(lookup func(string) (string, bool), name string, now time.Time) (time.Time, bool) {
	v, _ := lookup(name)
	if v == "" {
		if _, set := lookup("TZ"); set {
			return time.Time{}, false // git and Go may read it differently
		}
		_, off := now.Zone()
		return time.Unix(now.Unix(), 0).In(time.FixedZone("", off)), true
	}
	if rest, ok := strings.CutPrefix(v, "@"); ok {
		secs, zone, ok := strings.Cut(rest, " ")
		if !ok || !isDigits(secs) || len(secs) > 12 || len(zone) != 5 || (zone[0] != '+' && zone[0] != '-') || !isDigits(zone[1:]) {
			return time.Time{}, false
		}
		n, _ := strconv.ParseInt(secs, 10, 64)
		hh, _ := strconv.Atoi(zone[1:3])
		mm, _ := strconv.Atoi(zone[3:5])
		if hh*60+mm >= 100*60 {
			// git writes such a zone with three digits of hours, which
			// git var's reader refuses: left to it
			return time.Time{}, false
		}
		off := (hh*60 + mm) * 60
		if zone[0] == '-' {
			off = -off
		}
		return time.Unix(n, 0).In(time.FixedZone("", off)), true
	}
	if !rfc3339Shape(v) {
		return time.Time{}, false
	}
	for _, layout := range []string{"2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05Z0700"} {
		t, err := time.Parse(layout, v)
		if err != nil || t.Year() < 1970 || t.Year() > 2099 {
			continue
		}
		_, off := t.Zone()
		if off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
			return time.Time{}, false
		}
		return time.Unix(t.Unix(), 0).In(time.FixedZone("", off)), true
	}
	return time.Time{}, false
}

// rfc3339Shape reports whether s is "dddd-dd-ddTdd:dd:dd" and a zone: "Z",
// or a sign and four digits with or without a colon between the hours and
// the minutes (what Go's time.Parse would also read otherwise, a fraction
// of a second or a one-digit hour, is left to git).
func rfc3339Shape(s string) bool {
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return false
	}
	for _, part := range []string{s[:4], s[5:7], s[8:10], s[11:13], s[14:16], s[17:19]} {
		if !isDigits(part) {
			return false
		}
	}
	switch zone := s[19:]; {
	case zone == "Z":
		return true
	case len(zone) == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':':
		return isDigits(zone[1:3]) && isDigits(zone[4:])
	case len(zone) == 5 && (zone[0] == '+' || zone[0] == '-'):
		return isDigits(zone[1:])
	}
	return false
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseIdent parses git's "Name <email> 1700000000 +0200".
func parseIdent(s string) (Signature, error) {
	lt := strings.LastIndexByte(s, '<')
	gt := strings.LastIndexByte(s, '>')
	if lt < 0 || gt < lt {
		return Signature{}, fmt.Errorf("cannot parse identity %q", s)
	}
	sig := Signature{Name: strings.TrimSpace(s[:lt]), Email: s[lt+1 : gt]}
	f := strings.Fields(s[gt+1:])
	if len(f) != 2 {
		return Signature{}, fmt.Errorf("cannot parse identity date in %q", s)
	}
	secs, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return Signature{}, fmt.Errorf("cannot parse identity date in %q", s)
	}
	tz := f[1]
	if len(tz) != 5 || (tz[0] != '+' && tz[0] != '-') || !isDigits(tz[1:]) {
		return Signature{}, fmt.Errorf("cannot parse time zone in %q", s)
	}
	hh, err1 := strconv.Atoi(tz[1:3])
	mm, err2 := strconv.Atoi(tz[3:5])
	if err1 != nil || err2 != nil {
		return Signature{}, fmt.Errorf("cannot parse time zone in %q", s)
	}
	off := (hh*60 + mm) * 60
	if tz[0] == '-' {
		off = -off
	}
	sig.When = time.Unix(secs, 0).In(time.FixedZone("", off))
	return sig, nil
}

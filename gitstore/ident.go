package gitstore

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// identCache is the author and committer of the commits this process
// makes, resolved once by git var (strictly, as git commit resolves them),
// whose processes may be started ahead of need.
type identCache struct {
	mu                sync.Mutex
	procs             [2]*proc // git var GIT_AUTHOR_IDENT, GIT_COMMITTER_IDENT
	done              bool
	author, committer Signature
	err               error
}

// PrefetchIdentity starts resolving the identity, so that a later Identity
// does not wait for git to start.
func (r *Repo) PrefetchIdentity() {
	r.ident.mu.Lock()
	defer r.ident.mu.Unlock()
	if r.ident.procs[0] != nil || r.ident.done {
		return
	}
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
func (r *Repo) Identity() (author, committer Signature, err error) {
	r.PrefetchIdentity()
	r.ident.mu.Lock()
	defer r.ident.mu.Unlock()
	if !r.ident.done {
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
	}
	return r.ident.author, r.ident.committer, r.ident.err
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

package gitstore

import (
	"bytes"
	"context"
	"strings"
)

// LackingTrailer returns the commits of revs (as git log selects them, no
// merges) whose trailer block has no key trailer at all, newest first: the
// commits of an open cycle that the commit-msg hook did not reach (one that
// carries another value, a cherry-pick of another cycle's work, is no such
// commit).
func (r *Repo) LackingTrailer(key string, revs ...string) ([]Hash, error) {
	args := append([]string{"log", "-z", "--no-merges", "--format=%H%x1f%(trailers:key=" + key + ",valueonly,separator=%x1e)", "--end-of-options"}, revs...)
	out, err := r.git(context.Background(), nil, append(args, "--")...)
	if err != nil {
		return nil, err
	}
	var lacking []Hash
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		h, vals, ok := strings.Cut(strings.TrimSpace(string(rec)), "\x1f")
		if !ok {
			continue
		}
		hash, err := ParseHash(h)
		if err != nil {
			continue
		}
		if strings.TrimSpace(vals) == "" {
			lacking = append(lacking, hash)
		}
	}
	return lacking, nil
}

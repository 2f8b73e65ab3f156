package gitstore

import (
	"bytes"
	"context"
	"slices"
	"strings"
)

// LackingTrailer returns the commits of revs (as git log selects them, no
// merges) whose trailer block has no key trailer with the value value,
// newest first: the commits of an open cycle that the commit-msg hook did
// not reach.
func (r *Repo) LackingTrailer(key, value string, revs ...string) ([]Hash, error) {
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
		if !slices.Contains(strings.Split(strings.TrimSpace(vals), "\x1e"), value) {
			lacking = append(lacking, hash)
		}
	}
	return lacking, nil
}

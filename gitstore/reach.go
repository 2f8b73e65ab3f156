package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
)

// Reachable reports which of the candidates the commit rev names reaches
// (itself included), each with its place in git rev-list's order from rev
// (0 for rev itself; nearer rev, smaller): what it lists, read until every
// candidate has been seen, so that a history whose candidates are all
// recent costs their distance from rev, not the whole history. An unborn
// rev (a branch with no commit yet) reaches nothing. In a shallow clone
// the answer is that of the history the clone holds.
func (r *Repo) Reachable(rev string, candidates []Hash) (map[Hash]int, error) {
	out := map[Hash]int{}
	want := make(map[Hash]bool, len(candidates))
	for _, c := range candidates {
		if !c.IsZero() {
			want[c] = true
		}
	}
	if len(want) == 0 {
		return out, nil
	}
	tips, errs, err := r.LookupCommits(rev)
	if err != nil {
		return nil, err
	}
	if errs[0] != nil {
		return out, nil // unborn: no commit, no history
	}
	tip := tips[0]
	if want[tip] && len(want) == 1 {
		out[tip] = 0
		return out, nil
	}
	p, err := r.startPiped(context.Background(), false, "rev-list", tip.String(), "--")
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(p.stdout)
	for n := 0; sc.Scan(); n++ {
		h, err := ParseHash(sc.Text())
		if err != nil {
			p.kill()
			return nil, fmt.Errorf("git rev-list printed %q", sc.Text())
		}
		if want[h] {
			out[h] = n
		}
		if n == reachPrune && len(out) < len(want) {
			// Candidates not seen yet may not be in rev's history at
			// all, which would make this walk read all of it: git says
			// which rev does not reach (walking their lines of history
			// down to where rev's joins them), and they are not looked
			// for. Most answers end before this, with one git process.
			rest := map[Hash]bool{}
			for c := range want {
				if _, seen := out[c]; !seen {
					rest[c] = true
				}
			}
			if unreached, err := r.notReachedFrom(tip, rest); err == nil {
				for c := range unreached {
					delete(want, c)
				}
			}
		}
		if len(out) == len(want) {
			p.kill() // every candidate seen: the rest of the history is not read
			return out, nil
		}
	}
	if err := sc.Err(); err != nil {
		p.kill()
		return nil, err
	}
	return out, p.wait()
}

// reachPrune is how many commits of rev's history Reachable reads before
// it asks git which candidates rev does not reach (the tests make it 0).
var reachPrune = 1000

// notReachedFrom is which of the candidates tip does not reach, from git
// rev-list of the candidates not reachable from tip: git walks their lines
// of history down to where tip's joins them, not all of tip's. An error
// (a candidate that is no commit, or not here) leaves the caller to look
// for every candidate in tip's history.
func (r *Repo) notReachedFrom(tip Hash, candidates map[Hash]bool) (map[Hash]bool, error) {
	var in bytes.Buffer
	for h := range candidates {
		in.WriteString(h.String())
		in.WriteByte('\n')
	}
	in.WriteString("^" + tip.String() + "\n")
	listed, err := r.git(context.Background(), in.Bytes(), "rev-list", "--stdin")
	if err != nil {
		return nil, err
	}
	out := map[Hash]bool{}
	for _, line := range bytes.Fields(listed) {
		h, err := ParseHash(string(line))
		if err != nil {
			return nil, fmt.Errorf("git rev-list printed %q", line)
		}
		if candidates[h] {
			out[h] = true
		}
	}
	return out, nil
}

package share

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
)

// ClaimsPrefix is where cycle numbers are claimed on a remote: one ref a
// number, refs/evolve/claims/<n>.
const ClaimsPrefix = "refs/evolve/claims/"

// Claim reserves a cycle number on remote, so that clones which claim
// before they start never take the same one: it creates
// refs/evolve/claims/<n> there with a create-only push (the push's lease
// says the ref must not exist) for the first n from `from` on, past the
// highest number claimed there, that no other clone claims first. The ref
// names a small commit (an empty tree; message says who claimed it and for
// what). It returns the number claimed.
func Claim(repo *gitstore.Repo, remote string, from int, message string) (int, error) {
	claims, err := repo.RemoteRefs(remote, ClaimsPrefix+"*")
	if err != nil {
		return 0, err
	}
	n := from
	for ref := range claims {
		if k, err := strconv.Atoi(strings.TrimPrefix(ref, ClaimsPrefix)); err == nil && k >= n {
			n = k + 1
		}
	}
	tree, err := repo.EmptyTree()
	if err != nil {
		return 0, err
	}
	author, committer, err := repo.Identity()
	if err != nil {
		return 0, err
	}
	// A nonce makes each claim's commit its own: two clones' claims of one
	// number are never the same commit (whose push would be "up to date").
	nonce := make([]byte, 10)
	rand.Read(nonce)
	for attempt := 0; attempt < 50; attempt, n = attempt+1, n+1 {
		msg := fmt.Sprintf("%s\n\nEvolve-Cycle: %d\nEvolve-Claim: %x\n", message, n, nonce)
		commit, err := repo.WriteCommit(tree, nil, msg, author, committer)
		if err != nil {
			return 0, err
		}
		res, err := repo.Push(remote, []gitstore.PushUpdate{{Local: commit, Remote: ClaimsPrefix + strconv.Itoa(n)}})
		if errors.Is(err, gitstore.ErrPushRejected) {
			continue // another clone claimed n first
		}
		if err != nil {
			return 0, fmt.Errorf("claiming cycle %d on %s: %w", n, remote, err)
		}
		if len(res) != 1 || res[0].Status != "new" {
			continue // the ref was there already: not ours
		}
		return n, nil
	}
	return 0, fmt.Errorf("claiming a cycle number on %s: 50 numbers in a row were claimed by others meanwhile", remote)
}

package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/git-evolve/git-evolve/queue"
)

// Bead is a ready issue of bd (beads), the issue tracker the seeds' loops
// take work from (seed 004, Step 3.2: "check bd ready").
type Bead struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Priority    int    `json:"priority"`
	Description string `json:"description,omitempty"`
}

// Bounds of what is read from bd: its output is another program's.
const (
	beadsTimeout  = 30 * time.Second
	maxBeadsBytes = 4 << 20
	maxBeads      = 500
)

// beadID is the shape of an id taken from bd.
var beadID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$`) })

// ReadyBeads asks bd for its ready issues (bd ready --json, in dir), the
// highest priority (lowest number) first. Without bd on PATH there are
// none, and nothing is said: most repositories do not use it.
func ReadyBeads(ctx context.Context, dir string) ([]Bead, error) {
	bd, err := exec.LookPath("bd")
	if err != nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, beadsTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bd, "ready", "--json")
	cmd.Dir = dir
	stderr := newTail(4 << 10)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bd ready --json: %w", err)
	}
	data, rerr := io.ReadAll(io.LimitReader(out, maxBeadsBytes+1))
	if len(data) > maxBeadsBytes {
		cancel() // no more is read: bd is not left blocked on the pipe
	}
	werr := cmd.Wait()
	switch {
	case rerr != nil:
		return nil, fmt.Errorf("bd ready --json: %w", rerr)
	case werr != nil:
		if len(data) > maxBeadsBytes {
			return nil, fmt.Errorf("bd ready --json: more than %d bytes of output", maxBeadsBytes)
		}
		return nil, fmt.Errorf("bd ready --json: %v: %s", werr, strings.TrimSpace(cleanLine(string(stderr.buf))))
	case len(data) > maxBeadsBytes:
		return nil, fmt.Errorf("bd ready --json: more than %d bytes of output", maxBeadsBytes)
	}
	var beads []Bead
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, &beads); err != nil {
			return nil, fmt.Errorf("bd ready --json: not a JSON array of issues: %v", err)
		}
	}
	var ok []Bead
	for _, b := range beads {
		// The id becomes the cycle's target, a trailer and a line on a
		// terminal: only the shape of an id is taken.
		b.Title = cleanLine(b.Title)
		if !beadID().MatchString(b.ID) {
			continue
		}
		if len(b.Description) > 4096 {
			b.Description = b.Description[:4096]
		}
		ok = append(ok, b)
		if len(ok) == maxBeads {
			break
		}
	}
	sort.SliceStable(ok, func(i, j int) bool { return ok[i].Priority < ok[j].Priority })
	return ok, nil
}

// QualityScore is seed 004's quality score of the findings left in the
// work queue: 100 - 10 × high - 3 × medium (unconsumed, for this
// repository or any), at least 0. done, when set, is an item the cycle
// consumes, not counted.
func (s *State) QualityScore(done string) float64 {
	high, medium := s.openFindings(done)
	return float64(max(0, 100-10*high-3*medium))
}

// openFindings counts the high and medium queue items of this repository
// not consumed, item done left out.
func (s *State) openFindings(done string) (high, medium int) {
	for _, it := range s.Items {
		if it.Consumed || it.ClaimStatus == queue.Consumed || s.scope(it) < 0 || it.ID == done {
			continue
		}
		switch queue.SeverityRank(it.Severity) {
		case 0:
			high++
		case 1:
			medium++
		}
	}
	return high, medium
}

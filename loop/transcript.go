package loop

import (
	"strconv"
	"sync"

	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/redact"
)

// A cycle's transcript: what its agent printed (stdout and stderr as they
// came), the last MaxTranscript bytes, terminal escapes removed and the
// common shapes of secrets redacted, kept as a blob under
// refs/evolve/transcripts/<cycle id> (cycle.TranscriptRef) and named by the
// cycle's record.

// MaxTranscript is how much of the agent's output a transcript keeps: the
// end of it.
const MaxTranscript = 1 << 20

// tail keeps the last max bytes written to it; safe for concurrent writes.
type tail struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return len(p), nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return len(p), nil
}

// Transcript is what was kept: cleaned and redacted, with a first line
// saying what was cut when the output was longer.
func (t *tail) Transcript() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := redact.String(goals.CleanText(string(t.buf)))
	if cut := t.total - int64(len(t.buf)); cut > 0 {
		s = "[the first " + strconv.FormatInt(cut, 10) + " bytes of the agent's output are not kept]\n" + s
	}
	return []byte(s)
}

package loop

import (
	"regexp"
	"strconv"
	"sync"

	"github.com/git-evolve/git-evolve/goals"
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
	s := Redact(goals.CleanText(string(t.buf)))
	if cut := t.total - int64(len(t.buf)); cut > 0 {
		s = "[the first " + strconv.FormatInt(cut, 10) + " bytes of the agent's output are not kept]\n" + s
	}
	return []byte(s)
}

// secretShapes are the common shapes of secrets in an agent's output, each
// with what replaces it.
// They are compiled when first used, not as every command starts.
var secretShapes = sync.OnceValue(func() []secretShape {
	return []secretShape{
		{regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`), "[REDACTED PRIVATE KEY]"},
		// a key whose BEGIN line was cut off with the output's start
		{regexp.MustCompile(`^[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----`), "[REDACTED PRIVATE KEY]"},
		{regexp.MustCompile(`(?i)(authorization\s*:\s*)[^\r\n]+`), "${1}[REDACTED]"},
		{regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9\-._~+/]{16,}=*`), "${1} [REDACTED]"},
		{regexp.MustCompile(`\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9\-_]{20,})`), "[REDACTED]"},
		{regexp.MustCompile(`\bsk-[A-Za-z0-9][A-Za-z0-9_\-]{19,}`), "[REDACTED]"},
		{regexp.MustCompile(`\b(npm_[A-Za-z0-9]{30,}|hf_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_\-]{40,})`), "[REDACTED]"},
		{regexp.MustCompile(`(?i)(--(?:password|passwd|token|api-key|secret)[= ])\S+`), "${1}[REDACTED]"},
		{regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`), "[REDACTED]"},
		{regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), "[REDACTED]"},
		{regexp.MustCompile(`\bAIza[0-9A-Za-z\-_]{35}`), "[REDACTED]"},
		{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`), "[REDACTED JWT]"},
		{regexp.MustCompile(`(?i)\b([a-z0-9_]*(?:api[_-]?key|secret|token|password|passwd|access[_-]?key|private[_-]?key)[a-z0-9_]*"?)(\s*[=:]\s*)("[^"\r\n]*"|'[^'\r\n]*'|[^\s"',}]+)`), "${1}${2}[REDACTED]"},
		{regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@`), "${1}[REDACTED]@"},
	}
})

type secretShape struct {
	re   *regexp.Regexp
	with string
}

// Redact replaces the common shapes of secrets in s: private key blocks,
// Authorization headers, bearer tokens, the tokens of the common forges and
// clouds and AI APIs, JWTs, key=value pairs whose key names a secret, and
// passwords in URLs.
func Redact(s string) string {
	for _, sh := range secretShapes() {
		s = sh.re.ReplaceAllString(s, sh.with)
	}
	return s
}

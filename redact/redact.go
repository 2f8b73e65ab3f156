// Package redact removes secrets from text git-evolve keeps or prints: an
// agent's transcript, the excerpts of failed checks and gate commands that
// records and fitness snapshots store.
//
// It knows nothing of git and of the rest of git-evolve: it takes text and
// returns it with each secret replaced by Marker.
package redact

import (
	"regexp"
	"sync"
)

// Marker is what replaces a secret.
const Marker = "[REDACTED]"

// secretShapes are the common shapes of secrets, each with what replaces
// it. They are compiled when first used, not as every command starts.
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

// String replaces the common shapes of secrets in s: private key blocks,
// Authorization headers, bearer tokens, the tokens of the common forges and
// clouds and AI APIs, JWTs, key=value pairs whose key names a secret, and
// passwords in URLs.
func String(s string) string {
	for _, sh := range secretShapes() {
		s = sh.re.ReplaceAllString(s, sh.with)
	}
	return s
}

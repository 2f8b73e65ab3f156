package loop

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"Authorization: Bearer abcdefghijklmnopqrstuvwxyz":                     "Authorization: [REDACTED]",
		"curl -H 'authorization: token ghp_abc'":                               "curl -H 'authorization: [REDACTED]",
		"using ghp_0123456789abcdefghijABCDEFGHIJ now":                         "using [REDACTED] now",
		"key sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA":                            "key [REDACTED]",
		"AWS AKIAIOSFODNN7EXAMPLE":                                             "AWS [REDACTED]",
		"export API_KEY=hunter2hunter2":                                        "export API_KEY=[REDACTED]",
		`password: "s3cret pass"`:                                              "password: [REDACTED]",
		"https://user:pa55@example.com/repo.git":                               "https://[REDACTED]@example.com/repo.git",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----": "[REDACTED PRIVATE KEY]",
		"a plain line about tokens and keys":                                   "a plain line about tokens and keys",
		"ok 42 tests passed":                                                   "ok 42 tests passed",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	tl := newTail(10)
	tl.Write([]byte("0123456789"))
	tl.Write([]byte("abc\x1b[31mX"))
	got := string(tl.Transcript())
	if !strings.HasPrefix(got, "[the first 9 bytes of the agent's output are not kept]\n") || strings.ContainsRune(got, 0x1b) || !strings.HasSuffix(got, "X") {
		t.Errorf("transcript %q", got)
	}
	big := newTail(4)
	big.Write([]byte("abcdefgh"))
	if got := string(big.buf); got != "efgh" {
		t.Errorf("one write longer than the tail: %q", got)
	}
}

func TestRedactMoreShapes(t *testing.T) {
	for in, want := range map[string]string{
		`{"api_key": "abc123def456", "client_secret":"x9"}`: `{"api_key": [REDACTED], "client_secret":[REDACTED]}`,
		"PRIVATE_KEY=abcdef":                              "PRIVATE_KEY=[REDACTED]",
		"login --password hunter2 now":                    "login --password [REDACTED] now",
		"npm_abcdefghijklmnopqrstuvwxyz0123456789":        "[REDACTED]",
		"MIIE\nabc\n-----END RSA PRIVATE KEY-----\nafter": "[REDACTED PRIVATE KEY]\nafter",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

package redact

import "testing"

func TestString(t *testing.T) {
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
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStringMoreShapes(t *testing.T) {
	for in, want := range map[string]string{
		`{"api_key": "abc123def456", "client_secret":"x9"}`: `{"api_key": [REDACTED], "client_secret":[REDACTED]}`,
		"PRIVATE_KEY=abcdef":                              "PRIVATE_KEY=[REDACTED]",
		"login --password hunter2 now":                    "login --password [REDACTED] now",
		"npm_abcdefghijklmnopqrstuvwxyz0123456789":        "[REDACTED]",
		"MIIE\nabc\n-----END RSA PRIVATE KEY-----\nafter": "[REDACTED PRIVATE KEY]\nafter",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

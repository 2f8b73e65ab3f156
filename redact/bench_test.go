package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// transcript is n bytes of what an agent at work prints: go test -v
// output, git log and diffs of code that speaks of keys, tokens, auth and
// secrets, JSON with UUIDs, base64 in code, package managers' lines, and
// now and then a secret. The same n gives the same text.
func transcript(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	word := func(k int, alphabet string) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	hex := func(k int) string { return word(k, "0123456789abcdef") }
	uuid := func() string { return hex(8) + "-" + hex(4) + "-4" + hex(3) + "-a" + hex(3) + "-" + hex(12) }
	lines := []func() string{
		func() string { return "=== RUN   TestParseRecord/legacy_fields_" + word(6, "abcdefgh") },
		func() string { return fmt.Sprintf("--- PASS: TestTokenRefresh (0.%02ds)", r.IntN(100)) },
		func() string {
			return fmt.Sprintf("    record_test.go:%d: got key %q = %d, want %d", r.IntN(400), word(5, "abcdefg"), r.IntN(9), r.IntN(9))
		},
		func() string { return fmt.Sprintf("ok  \tgithub.com/example/project/ledger\t0.%03ds", r.IntN(1000)) },
		func() string { return "commit " + hex(40) },
		func() string { return "Author: A U Thor <author@example.com>" },
		func() string { return "diff --git a/auth/token.go b/auth/token.go" },
		func() string { return "index " + hex(7) + ".." + hex(7) + " 100644" },
		func() string { return "+\ttoken, err := auth.NewToken(ctx, cfg.APIKey)" },
		func() string { return "\tif key == \"\" {\n\t\treturn ErrNoKey\n\t}" },
		func() string { return "-\tsecretName := fmt.Sprintf(\"%s-secret\", name)" },
		func() string { return `{"id":"` + uuid() + `","status":"ok","access":"read","api_version":"v2"}` },
		func() string { return "\tdata := \"" + word(24, alnum) + "==\" // base64 of the fixture" },
		func() string {
			return fmt.Sprintf("added %d packages, and audited %d packages in %ds", r.IntN(2000), r.IntN(2000), r.IntN(60))
		},
		func() string {
			return "The access token is refreshed before it expires; the secret stays in the keychain."
		},
		func() string { return "Running `go vet ./...` and `go test ./auth -run TestKey` now." },
	}
	secrets := []func() string{
		func() string { return "Authorization: Bearer " + word(40, alnum) },
		func() string { return "  GITHUB_TOKEN=ghp_" + word(36, alnum) },
		func() string { return "aws_secret_access_key = " + word(40, alnum+"/+") },
	}
	var b strings.Builder
	b.Grow(n + 200)
	for i := 0; b.Len() < n; i++ {
		if i%500 == 499 {
			b.WriteString(secrets[r.IntN(len(secrets))]())
		} else {
			b.WriteString(lines[r.IntN(len(lines))]())
		}
		b.WriteByte('\n')
	}
	return b.String()[:n]
}

func BenchmarkString(b *testing.B) {
	for _, size := range []int{1 << 20, 10 << 20} {
		in := transcript(size)
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			String(in) // rules compiled before the clock starts
			b.SetBytes(int64(len(in)))
			cpu := cpuTime()
			for b.Loop() {
				String(in)
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkFirstUse is what a process pays the first time it redacts: the
// rule file read, then a gate's failing output redacted (the 32 KiB end of
// it an excerpt is made of), which compiles the rules its keywords wake.
func BenchmarkFirstUse(b *testing.B) {
	in := transcript(32 << 10)
	cpu := cpuTime()
	for b.Loop() {
		rs, err := loadRules(gitleaksRules, ourRules())
		if err != nil {
			b.Fatal(err)
		}
		with(rs, in)
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

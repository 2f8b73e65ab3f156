package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzString: redaction never panics, keeps valid UTF-8 valid, grows a
// text by at most the markers of the secrets it replaced (each at least
// one byte, apart from each other), and is the same once or twice.
func FuzzString(f *testing.F) {
	for _, tc := range secretCases() {
		f.Add(tc.in)
	}
	for _, in := range plainCases() {
		f.Add(in)
	}
	f.Add(transcript(4 << 10))
	f.Add("-----BEGIN PRIVATE KEY-----\n" + strings.Repeat("QUJD\n", 50))
	f.Add("token=" + Marker + "x " + Marker[:5] + "password=" + Marker[5:])
	f.Add("machine é login ü password ß\nkey = \"ünïcödé-välue-0123456789\"")
	f.Fuzz(func(t *testing.T, in string) {
		out := String(in)
		if bound := len(in) + (len(Marker)-1)*((len(in)+1)/2); len(out) > bound {
			t.Fatalf("%d bytes in, %d out", len(in), len(out))
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("String(%q) = %q, not valid UTF-8", in, out)
		}
		if again := String(out); again != out {
			t.Fatalf("String(%q) = %q, and again %q", in, out, again)
		}
	})
}

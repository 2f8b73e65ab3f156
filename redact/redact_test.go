package redact

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

// fake makes a random-looking string of n characters of alphabet, the same
// for the same seed: secrets of the right shape and entropy, written
// nowhere in this file as a whole (a scanner reading the source finds
// none).
func fake(seed uint64, alphabet string, n int) string {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	hexa   = "0123456789abcdef"
	base64 = alnum + "+/"
)

// pemBody is the base64 lines of a PEM block.
func pemBody(seed uint64, lines int) string {
	var b strings.Builder
	for i := range lines {
		b.WriteString(fake(seed+uint64(i), base64, 64))
		b.WriteByte('\n')
	}
	b.WriteString(fake(seed+99, base64, 20) + "==")
	return b.String()
}

type redactCase struct {
	name string
	in   string
	// secrets must not be in the output; the output holds Marker.
	secrets []string
	// want, when set, is the whole output.
	want string
}

func secretCases() []redactCase {
	stripe := "sk_" + "live_" + fake(1, alnum, 32)
	stripeRestricted := "rk_" + "live_" + fake(2, alnum, 32)
	sendgrid := "SG." + fake(3, alnum+"_-", 22) + "." + fake(4, alnum+"_-", 43)
	twilioKey := "SK" + fake(5, hexa, 32)
	twilioSID := "AC" + fake(6, hexa, 32)
	twilioToken := fake(7, hexa, 32)
	azureKey := fake(8, base64, 86) + "=="
	netrcPass := "s3cr3t-" + fake(9, alnum, 6)
	dockerAuth := fake(10, base64, 26) + "=="
	rsa := pemBody(11, 6)
	ec := pemBody(12, 2)
	openssh := pemBody(13, 5)
	bearer := fake(14, alnum, 40)
	basic := fake(15, base64, 30) + "=="
	awsID := "AKIA" + fake(16, upper, 16)
	awsSecret := fake(17, base64, 40)
	ghp := "ghp_" + fake(18, alnum, 36)
	ghs := "ghs_" + fake(19, alnum, 36)
	ghFine := "github_" + "pat_" + fake(20, alnum+"_", 82)
	glpat := "glpat-" + fake(21, alnum, 20)
	slackBot := "xoxb-" + fake(22, "0123456789", 12) + "-" + fake(23, "0123456789", 13) + "-" + fake(24, alnum, 24)
	slackUser := "xoxp-" + fake(25, "0123456789", 12) + "-" + fake(26, "0123456789", 12) + "-" + fake(27, "0123456789", 12) + "-" + fake(28, hexa, 32)
	google := "AIza" + fake(29, alnum+"_-", 35)
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ." + fake(30, alnum+"_-", 43)
	urlPass := fake(31, alnum, 20)
	lowPass := "hunter2hunter2"
	return []redactCase{
		{name: "stripe secret key", in: "STRIPE_KEY " + stripe + "\n", secrets: []string{stripe}, want: "STRIPE_KEY " + Marker + "\n"},
		{name: "stripe restricted key", in: "using " + stripeRestricted, secrets: []string{stripeRestricted}, want: "using " + Marker},
		{name: "sendgrid", in: "apikey: " + sendgrid + "\n", secrets: []string{sendgrid}},
		{name: "twilio api key", in: "twilio key " + twilioKey + " ok", secrets: []string{twilioKey}, want: "twilio key " + Marker + " ok"},
		{name: "twilio auth token in the environment", in: "TWILIO_ACCOUNT_SID=" + twilioSID + "\nTWILIO_AUTH_TOKEN=" + twilioToken + "\n", secrets: []string{twilioToken}},
		{name: "twilio auth token in code", in: "account_sid = \"" + twilioSID + "\"\nauth_token = \"" + twilioToken + "\"\n", secrets: []string{twilioToken}},
		{name: "twilio account and token with curl", in: "curl -X POST https://api.twilio.com/2010-04-01/Accounts/" + twilioSID + "/Messages.json -u " + twilioSID + ":" + twilioToken + "\n", secrets: []string{twilioToken}},
		{name: "twilio account and token in a URL", in: "https://" + twilioSID + ":" + twilioToken + "@api.twilio.com/2010-04-01", secrets: []string{twilioToken}},
		{name: "azure storage connection string", in: "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + azureKey + ";EndpointSuffix=core.windows.net", secrets: []string{azureKey},
			want: "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + Marker + ";EndpointSuffix=core.windows.net"},
		{name: "azure key holding a stop word", in: "AccountKey=" + azureKey[:30] + "about" + azureKey[35:], secrets: []string{azureKey[:30]}},
		{name: "netrc on one line", in: "machine api.example.com login alice password " + netrcPass + "\n", secrets: []string{netrcPass},
			want: "machine api.example.com login alice password " + Marker + "\n"},
		{name: "netrc on several lines", in: "machine git.example.com\n  login alice\n  password " + netrcPass + "\nmachine other\n", secrets: []string{netrcPass}},
		{name: "netrc low-entropy password", in: "machine h login u password " + lowPass, secrets: []string{lowPass}},
		{name: "netrc default entry", in: "default login anonymous password " + netrcPass, secrets: []string{netrcPass}, want: "default login anonymous password " + Marker},
		{name: "docker config auth", in: `{"auths":{"registry.example.com":{"auth":"` + dockerAuth + `"}}}`, secrets: []string{dockerAuth},
			want: `{"auths":{"registry.example.com":{"auth":"` + Marker + `"}}}`},
		{name: "docker config auth, pretty", in: "{\n\t\"auths\": {\n\t\t\"ghcr.io\": {\n\t\t\t\"auth\": \"YTpi\"\n\t\t}\n\t}\n}", secrets: []string{"YTpi"}},
		{name: "docker identity token", in: `"identitytoken": "` + fake(32, alnum, 30) + `"`, secrets: []string{fake(32, alnum, 30)}},
		{name: "RSA private key", in: "-----BEGIN RSA PRIVATE KEY-----\n" + rsa + "\n-----END RSA PRIVATE KEY-----\nnext line", secrets: []string{rsa[:64], rsa[len(rsa)-20:]},
			want: Marker + "\nnext line"},
		{name: "encrypted PEM with headers", in: "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF\n\n" + rsa + "\n-----END RSA PRIVATE KEY-----", secrets: []string{rsa[:64]}, want: Marker},
		{name: "EC private key", in: "-----BEGIN EC PRIVATE KEY-----\n" + ec + "\n-----END EC PRIVATE KEY-----", secrets: []string{ec[:64]}, want: Marker},
		{name: "OpenSSH private key", in: "$ cat ~/.ssh/id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + openssh + "\n-----END OPENSSH PRIVATE KEY-----\n$ ls", secrets: []string{openssh[:64]},
			want: "$ cat ~/.ssh/id_ed25519\n" + Marker + "\n$ ls"},
		{name: "private key cut at its end", in: "-----BEGIN PRIVATE KEY-----\n" + rsa[:200], secrets: []string{rsa[:64], rsa[130:190]}, want: Marker},
		{name: "private key cut at its start", in: rsa[70:] + "\n-----END PRIVATE KEY-----\nok", secrets: []string{rsa[70:134], rsa[len(rsa)-20:]}, want: Marker + "\nok"},
		{name: "private key in a JSON string", in: `{"private_key": "-----BEGIN PRIVATE KEY-----\n` + strings.ReplaceAll(ec, "\n", `\n`) + `\n-----END PRIVATE KEY-----\n", "client_email": "x@example.com"}`, secrets: []string{ec[:64]},
			want: `{"private_key": "` + Marker + `\n", "client_email": "x@example.com"}`},
		{name: "a BEGIN line alone takes nothing after it", in: "const header = \"-----BEGIN RSA PRIVATE KEY-----\"\nfunc parse() {}", secrets: nil,
			want: "const header = \"" + Marker + "\"\nfunc parse() {}"},
		{name: "authorization bearer", in: "Authorization: Bearer " + bearer + "\n", secrets: []string{bearer}, want: "Authorization: Bearer " + Marker + "\n"},
		{name: "authorization basic", in: "> authorization: Basic " + basic, secrets: []string{basic}, want: "> authorization: Basic " + Marker},
		{name: "authorization in curl", in: "curl -H 'Authorization: token " + ghp + "' https://api.github.com", secrets: []string{ghp}},
		{name: "authorization digest", in: `Authorization: Digest username="alice", realm="api", nonce="` + fake(33, hexa, 32) + `", response="` + fake(34, hexa, 32) + "\"\nnext",
			secrets: []string{fake(33, hexa, 32), fake(34, hexa, 32)}, want: "Authorization: Digest " + Marker + "\nnext"},
		{name: "authorization with no scheme", in: "authorization: " + bearer + " (from the cache)", secrets: []string{bearer}, want: "authorization: " + Marker + " (from the cache)"},
		{name: "authorization in a Go map", in: "map[Authorization:[Bearer " + bearer + "] Accept:[*/*]]", secrets: []string{bearer}, want: "map[Authorization:[Bearer " + Marker + "] Accept:[*/*]]"},
		{name: "bearer token alone", in: `{"token_type":"Bearer","access_token":"` + bearer + `"}` + "\nusing Bearer " + bearer, secrets: []string{bearer}},
		{name: "aws access key id", in: "aws_access_key_id = " + awsID, secrets: []string{awsID}},
		{name: "aws secret access key", in: "aws_secret_access_key = " + awsSecret + "\n", secrets: []string{awsSecret}},
		{name: "github classic token", in: "GITHUB_TOKEN=" + ghp, secrets: []string{ghp}},
		{name: "github app token in a remote URL", in: "remote: https://x-access-token:" + ghs + "@github.com/o/r.git", secrets: []string{ghs},
			want: "remote: https://x-access-token:" + Marker + "@github.com/o/r.git"},
		{name: "github fine-grained token", in: "token " + ghFine + " expires", secrets: []string{ghFine}},
		{name: "gitlab token", in: "glab auth login --token " + glpat, secrets: []string{glpat}},
		{name: "slack bot token", in: "SLACK_BOT " + slackBot, secrets: []string{slackBot}},
		{name: "slack user token", in: "token: " + slackUser, secrets: []string{slackUser}},
		{name: "google api key", in: "https://maps.googleapis.com/maps/api/geocode/json?address=x&key=" + google + "\n", secrets: []string{google}},
		{name: "jwt", in: "got " + jwt + " back", secrets: []string{jwt}, want: "got " + Marker + " back"},
		{name: "password in a URL", in: "postgres://app:" + urlPass + "@db.internal:5432/app", secrets: []string{urlPass}, want: "postgres://app:" + Marker + "@db.internal:5432/app"},
		{name: "low-entropy password in the environment", in: "DB_PASSWORD=" + lowPass + "\n", secrets: []string{lowPass}, want: "DB_PASSWORD=" + Marker + "\n"},
		{name: "low-entropy token in a log line", in: "level=info token=" + lowPass + " user=alice", secrets: []string{lowPass}, want: "level=info token=" + Marker + " user=alice"},
		{name: "password flag", in: "mysql --password " + lowPass + " -h db", secrets: []string{lowPass}, want: "mysql --password " + Marker + " -h db"},
		{name: "password in JSON", in: `{"user": "alice", "password": "correct horse"}`, secrets: []string{"correct horse"}, want: `{"user": "alice", "password": "` + Marker + `"}`},
		{name: "password in YAML", in: "db:\n  password: " + lowPass + "\n", secrets: []string{lowPass}, want: "db:\n  password: " + Marker + "\n"},
	}
}

// plainCases are texts that hold no secret and must come out as they went
// in: what people read in a failure's excerpt.
func plainCases() []string {
	return []string{
		"commit 3f2a9b1c4d5e6f708192a3b4c5d6e7f8091a2b3c\nAuthor: A U Thor <author@example.com>",
		"index 3f2a9b1..4e5d6c7 100644\nHEAD is now at 3f2a9b1 fix the key parser",
		"Evolve-Id: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"request 123e4567-e89b-12d3-a456-426614174000 failed",
		`{"id": "123e4567-e89b-12d3-a456-426614174000", "api_version": "v2", "access": "read"}`,
		"import \"encoding/base64\"\n\tdata := base64.StdEncoding.EncodeToString(buf)",
		"func TestParseAuthorizationHeader(t *testing.T) {",
		"\tconst greeting = \"SGVsbG8sIFdvcmxkIQ==\" // base64 of the fixture",
		"\tvar tokenCache = newLRU(ThisIsALongCamelCaseIdentifierName)",
		"=== RUN   TestSecretRotation/expired_key\n--- FAIL: TestTokenRefresh (0.00s)",
		"    token_test.go:42: got \"abc\", want \"def\"",
		"    auth_test.go:17: key mismatch: got 3, want 4",
		"    record_test.go:12: token = \"abc\", want \"def\"",
		"ok  \tgithub.com/example/project/auth\t0.123s\nFAIL\tgithub.com/example/project/auth\t0.456s",
		"panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a2b3c]",
		"goroutine 1 [running]:\nmain.main()\n\t/src/main.go:12 +0x1d\nexit status 2",
		"a plain line about tokens and keys",
		"ok 42 tests passed",
		"Authorization is required for this endpoint",
		"the API key is read from $API_KEY",
		"export API_KEY=$API_KEY\nDB_PASSWORD=${DB_PASSWORD}",
		"password: required",
		"+\tin := \"DB_PASSWORD=\" + password + \"\\n\"",
		"+\treq.Header.Set(\"Authorization\", \"Bearer \" + token)\n+\tline := \"Authorization: Bearer \" + token",
		"+\tfmt.Fprintf(w, \"machine %s login %s password \" + pass, host, user)",
		"see the `Authorization:` header and the `--token` flag",
		"the default password is shown at the first login",
		"the build machine password store is locked",
		"max_tokens=1000 temperature=0.2",
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGb3mnq0r0n5vJx2Wm4j0b8lRk8lC6Qv3m0XyT9fZp1Q alice@laptop",
		"added 1423 packages, and audited 1424 packages in 12s",
		"git push -u origin main\nTo https://github.com/example/project.git",
		"npm ERR! code E401\nnpm ERR! Unable to authenticate, need: Basic realm=\"GitHub Package Registry\"",
	}
}

func TestStringRedactsSecrets(t *testing.T) {
	for _, tc := range secretCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := String(tc.in)
			for _, s := range tc.secrets {
				if strings.Contains(got, s) {
					t.Errorf("secret %q kept:\n in: %q\nout: %q", s, tc.in, got)
				}
			}
			if !strings.Contains(got, Marker) {
				t.Errorf("no %s in %q", Marker, got)
			}
			if tc.want != "" && got != tc.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if again := String(got); again != got {
				t.Errorf("redacting again changed %q to %q", got, again)
			}
		})
	}
}

func TestStringKeepsPlainText(t *testing.T) {
	for _, in := range plainCases() {
		if got := String(in); got != in {
			t.Errorf("String(%q) = %q, want it unchanged", in, got)
		}
	}
}

// Secrets in a long text are found wherever they are, each once, with the
// text between them kept.
func TestStringInALongText(t *testing.T) {
	cases := secretCases()
	var in, want strings.Builder
	filler := transcript(64 << 10)
	for i, tc := range cases {
		if tc.want == "" {
			continue
		}
		part := filler[i*512 : i*512+400]
		part = part[:strings.LastIndexByte(part, '\n')+1]
		in.WriteString(part + tc.in + "\n")
		want.WriteString(String(part) + tc.want + "\n")
	}
	got, wanted := strings.Split(String(in.String()), "\n"), strings.Split(want.String(), "\n")
	for i := range min(len(got), len(wanted)) {
		if got[i] != wanted[i] {
			t.Fatalf("line %d of the whole is %q, of its parts %q", i+1, got[i], wanted[i])
		}
	}
	if len(got) != len(wanted) {
		t.Errorf("the whole has %d lines, its parts %d", len(got), len(wanted))
	}
}

func TestRulesLoad(t *testing.T) {
	rs, err := loadRules(gitleaksRules, ourRules())
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.rules) < 200 {
		t.Errorf("%d rules, want gitleaks' 200 and more", len(rs.rules))
	}
	if len(rs.always) != 0 {
		t.Errorf("rules without keywords run over every text: %d", len(rs.always))
	}
	// Every expression compiles (with Go's regexp, as gitleaks' do).
	for _, r := range rs.rules {
		r.compiled()
	}
}

func TestKeywords(t *testing.T) {
	k := newKeywords([]string{"he", "she", "his", "hers", "-----BEGIN"})
	var got []string
	k.scan("uSHErs and -----begin", func(w, at int) { got = append(got, k.words[w]+"@"+string(rune('0'+at))) })
	want := []string{"she@1", "he@2", "hers@2", "-----BEGIN@;"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %v, want %v", got, want)
	}
}

// The parts of gitleaks' rules, as gitleaks applies them: the secret
// group, the entropy threshold, the global allowlist, a rule's allowlists
// on the secret, the match or the line, with the condition AND (one that
// names paths never holds for text).
func TestRuleParts(t *testing.T) {
	const file = `
title = "test"
[allowlist]
description = "global"
regexes = ['''^dummy''']
stopwords = ["example"]

[[rules]]
id = "t"
description = "a test token"
regex = '''\b(tok|key)_([a-z0-9]{8})\b'''
secretGroup = 2
entropy = 2
keywords = ["tok_", "key_"]
[[rules.allowlists]]
regexTarget = "line"
regexes = ['''# test fixture''']
[[rules.allowlists]]
regexTarget = "match"
regexes = ['''^key_''']
[[rules.allowlists]]
condition = "AND"
regexes = ['''^0''']
stopwords = ["zz"]
[[rules.allowlists]]
condition = "AND"
regexes = ['''.''']
paths = ['''.''']

[[rules]]
id = "files"
path = '''\.pem$'''
regex = '''tok'''
keywords = ["tok_"]
`
	rs, err := loadRules([]byte(file), nil)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"use tok_a1b2c3d4 now":        "use tok_" + Marker + " now",
		"use tok_aaaaaaaa":            "use tok_aaaaaaaa",            // entropy
		"use tok_dummy123":            "use tok_dummy123",            // global regex
		"use tok_example1":            "use tok_example1",            // global stop word
		"tok_a1b2c3d4 # test fixture": "tok_a1b2c3d4 # test fixture", // the line
		"key_a1b2c3d4":                "key_a1b2c3d4",                // the match
		"tok_0abczz12":                "tok_0abczz12",                // AND: both
		"tok_0abcde12":                "tok_" + Marker,               // AND: the expression only
	} {
		if got := with(rs, in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
	if len(rs.rules) != 1 {
		t.Errorf("%d rules: a rule for files by their path is left out", len(rs.rules))
	}
	if _, err := loadRules([]byte(file+"\n[[rules.required]]\nid = \"t\"\n"), nil); err == nil {
		t.Error("a rule file with a part of gitleaks' configuration not read here was read")
	}
}

// source writes an expression Go's regexp reads back to the same one: each
// rule's expression, written by it, matches where the rule's own does.
func TestSource(t *testing.T) {
	var inputs []string
	for _, tc := range secretCases() {
		inputs = append(inputs, tc.in)
	}
	inputs = append(inputs, plainCases()...)
	inputs = append(inputs, strings.Split(transcript(4<<10), "\n")...)
	inputs = append(inputs, "İstanbul ſecret KEY=ſſſſſſſſſſſſ \u212aey=0123456789abcdef")
	for _, r := range rules().rules {
		re := r.compiled()
		parsed, err := syntax.Parse(r.source, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		written, err := regexp.Compile(source(parsed))
		if err != nil {
			t.Errorf("%s: %v", r.id, err)
			continue
		}
		for _, in := range inputs {
			if a, b := re.FindStringIndex(in), written.FindStringIndex(in); !slices.Equal(a, b) {
				t.Errorf("%s on %q: %v, written %v", r.id, in, a, b)
			}
		}
	}
}

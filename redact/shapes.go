package redact

// ourRules are the shapes of secrets gitleaks' rule set lacks, or finds
// only in the whole files it was made for and not in the pieces of output
// git-evolve keeps. Each says why it is here; redact_test.go has a case of
// each.
func ourRules() []*rule {
	// The line breaks of a PEM block: real ones, or the \n of a JSON or
	// shell string that holds it.
	const br = `(?:\r?\n|\\r?\\n)`
	const keyLabel = `[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`
	// A value: quoted (the secret is inside the quotes), a shell
	// variable (which the global allowlist lets be), or a word.
	const value = `(?:"([^"\r\n]+)"|'([^'\r\n]+)'|(\$\{[^}\s]*\})|([^\s"',;&|)}\]]+))`
	// The "value" of a name in code that puts a string together
	// ("PASSWORD=" + password + "\n"): the quotes are the code's.
	const codeAround = `^[ \t]*(?:[+.&,)]|\|\|)`
	return []*rule{
		{
			// A private key block, also one cut short: gitleaks' rule
			// needs the END line, which a transcript or an excerpt cut
			// at its end lacks. The block (the secret group) ends at its
			// END line or before the first line that is not base64 or a
			// PEM header, so that a BEGIN line a program prints alone
			// does not take the rest of the output with it; a line after
			// it ends, or the quote or bracket that closes the string it
			// is in, must follow, so that no line is taken in part.
			id:       "private-key-block",
			source:   `(-----BEGIN` + keyLabel + `(?:` + br + `[ \t]*(?:[A-Za-z][A-Za-z-]*:[^\r\n\\]*|[A-Za-z0-9+/=]+)?[ \t]*)*(?:` + br + `[ \t]*-----END` + keyLabel + `)?)(?:(?m:$)|[\r\\"',\]}])`,
			keywords: []string{"-----begin"},
			whole:    true,
		},
		{
			// The end of a private key block whose BEGIN line was cut off
			// with the start of the output kept: the base64 lines right
			// above its END line.
			id:       "private-key-end",
			source:   `(?m)(?:^[ \t]*[A-Za-z0-9+/=]+[ \t]*\r?\n)+[ \t]*-----END` + keyLabel + `|(?:[A-Za-z0-9+/=]+\\r?\\n)+-----END` + keyLabel,
			keywords: []string{"-----end"},
			whole:    true,
		},
		{
			// The credentials of an HTTP Authorization header: gitleaks
			// finds them only in a curl command line, and a verbose
			// client, a proxy log or a test printing a request shows the
			// header alone. The scheme stays; the credentials are a
			// token, or the rest of the line for the schemes whose
			// credentials are a list of parameters (Digest, AWS4).
			id:       "authorization-header",
			source:   `(?i)\b(?:proxy-)?authorization\\?["']?[ \t]*[:=][ \t]*\[?\\?["']?(?:(?:digest|aws4-hmac-sha256|hoba|mutual|vapid|scram-sha-1|scram-sha-256)[ \t]+([^\r\n]+)|(?:(?:bearer|basic|token|bot|negotiate|ntlm|sso-key|apikey|api-key)[ \t]+)?([^\s"'\x60\\\]]+))`,
			keywords: []string{"authorization"},
			// A scheme with its credentials in a variable after it, in
			// code: "Authorization: Bearer " + token.
			allow: secretsLike(`(?i)^(?:bearer|basic|token|bot|digest|negotiate|ntlm)$`),
		},
		{
			// A bearer token outside a header: a token type and its
			// token printed side by side.
			id:       "bearer-token",
			source:   `(?i)\bbearer[ \t]+([A-Za-z0-9\-._~+/]{16,}=*)`,
			keywords: []string{"bearer"},
		},
		{
			// A .netrc entry's password (machine … login … password …,
			// on one line or several), which curl, git and ftp read;
			// low-entropy passwords pass gitleaks' generic rule.
			id: "netrc-password",
			// (A default entry names its login first: "the default
			// password is …" in prose is no entry.)
			source:   `(?i)\b(?:machine[ \t\r\n]+\S+(?:[ \t\r\n]+(?:login|account|port)[ \t\r\n]+\S+)*|default(?:[ \t\r\n]+(?:login|account)[ \t\r\n]+\S+)+)[ \t\r\n]+password[ \t\r\n]+(\S+)`,
			keywords: []string{"machine", "default"},
			allow:    secretsLike(codeAround, `^["'\x60]+$`),
		},
		{
			// The credentials of a Docker config.json (auths.<registry>
			// .auth, the base64 of user:password, and identity tokens):
			// short or low-entropy ones pass gitleaks' generic rule.
			id:       "docker-config-auth",
			source:   `(?i)\\?"(?:auth|identitytoken|registrytoken)\\?"[ \t]*:[ \t]*\\?"([^"\\\s]+)\\?"`,
			keywords: []string{`"auth`, `"identitytoken`, `"registrytoken`},
		},
		{
			// The key of an Azure storage account or Service Bus in a
			// connection string: gitleaks has no rule for it, and its
			// generic rule misses a key that happens to hold one of its
			// many stop words.
			id:       "azure-connection-string-key",
			source:   `(?i)\b(?:AccountKey|SharedAccessKey)[ \t]*=[ \t]*([A-Za-z0-9+/]{16,}={0,2})`,
			keywords: []string{"accountkey", "sharedaccesskey"},
		},
		{
			// The password of a URL (scheme://user:password@host), as git
			// prints a remote's URL: gitleaks has no general rule for it.
			// The user stays.
			id:       "url-password",
			source:   `(?i)[a-z0-9+.-]*://[^/\s:@]*:([^/\s@]+)@`,
			keywords: []string{"://"},
		},
		{
			// A Twilio auth token (32 hex digits) given with its account
			// SID (AC…) or assigned to an auth token: gitleaks has a rule
			// for Twilio's API keys (SK…) only, and its generic rule's
			// entropy threshold misses about one auth token in three.
			id:       "twilio-auth-token",
			source:   `(?i)(?:\bAC[0-9a-f]{32}(?:\\?["']?[ \t]*[:,][ \t]*\\?["']?|[ \t]+)|auth[_-]?token\\?["']?[ \t]*[:=,][ \t]*\\?["']?)([0-9a-f]{32})\b`,
			keywords: []string{"ac", "auth_token", "authtoken", "auth-token"},
		},
		{
			// A value assigned to a name that says it is a password,
			// secret or token, as in an environment dump, a .env file or
			// a log line (NAME=value, no spaces): people's passwords are
			// too regular for gitleaks' entropy thresholds.
			id:       "secret-assignment",
			source:   `(?i)[\w.-]*(?:password|passwd|passphrase|secret|token)\b["']?=` + value,
			keywords: []string{"password", "passwd", "passphrase", "secret", "token"},
			allow:    secretsLike(codeAround),
		},
		{
			// The same given to a command line's flag.
			id:       "secret-flag",
			source:   `(?i)--(?:password|passwd|passphrase|secret|token|api-key)(?:=|[ \t]+)` + value,
			keywords: []string{"--password", "--passwd", "--passphrase", "--secret", "--token", "--api-key"},
			allow:    secretsLike(codeAround),
		},
		{
			// A password in JSON or YAML ("password": "…", password: …):
			// quoted, or with a digit or a symbol, so that prose like
			// "password: required" stays.
			id:       "password-field",
			source:   `(?i)[\w.-]*(?:password|passwd|passphrase)\\?["']?[ \t]*:[ \t]*(?:\\?"([^"\r\n\\]+)\\?"|'([^'\r\n]+)'|([^\s"',;]*[0-9!@#$%^&*+=?~][^\s"',;]*))`,
			keywords: []string{"password", "passwd", "passphrase"},
			allow:    secretsLike(codeAround),
		},
	}
}

// secretsLike is an allowlist of the secrets the expressions match: what a
// rule of ours finds that is no secret.
func secretsLike(exprs ...string) []*allowlist {
	return []*allowlist{{target: "secret", sources: exprs}}
}

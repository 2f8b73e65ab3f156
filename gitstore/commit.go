package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// parseCommit reads a commit object in git's format: headers (tree, parent,
// author, committer, and any others, with continuation lines starting with
// a space), a blank line, the message. (go-git's plumbing/object took 3.5
// times as long, and linking it about 3 ms more of every start:
// BenchmarkCodecParse, docs/benchmarks.md.)
func parseCommit(h Hash, data []byte) (CommitInfo, error) {
	ci := CommitInfo{Hash: h}
	msg, err := walkCommit(h, data, func(key, val []byte) {
		switch string(key) {
		case "tree":
			ci.Tree, _ = ParseHash(string(val))
		case "parent":
			p, _ := ParseHash(string(val))
			ci.Parents = append(ci.Parents, p)
		case "author":
			ci.Author = lenientIdent(string(val))
		case "committer":
			ci.Committer = lenientIdent(string(val))
		case "encoding":
			ci.Encoding = string(val)
		}
	})
	if err != nil {
		return CommitInfo{}, err
	}
	ci.Message = string(msg)
	return ci, nil
}

// walkCommit checks a commit object's headers (a tree, and each tree and
// parent a full object name), calls header with each one that is not a
// continuation line, and returns the message.
func walkCommit(h Hash, data []byte, header func(key, val []byte)) ([]byte, error) {
	bad := func(what string) ([]byte, error) {
		return nil, fmt.Errorf("reading commit %s: malformed %s", h.Short(), what)
	}
	var haveTree bool
	var msg []byte
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return bad("header")
		}
		line := data[:nl]
		data = data[nl+1:]
		if len(line) == 0 {
			msg = data
			break
		}
		if line[0] == ' ' {
			continue // continuation of a multi-line header (gpgsig, mergetag)
		}
		key, val, _ := bytes.Cut(line, []byte(" "))
		switch string(key) {
		case "tree":
			if len(val) != 40 || !isHexBytes(val) {
				return bad("tree")
			}
			haveTree = true
		case "parent":
			if len(val) != 40 || !isHexBytes(val) {
				return bad("parent")
			}
		}
		if header != nil {
			header(key, val)
		}
	}
	if !haveTree {
		return bad("commit: no tree")
	}
	return msg, nil
}

// isHexBytes reports whether b is made only of hexadecimal digits (of
// either case, as ParseHash takes them).
func isHexBytes(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// lenientIdent reads an author or committer line as git log does: a line
// without a usable date still gives its name and email (the time is zero).
func lenientIdent(s string) Signature {
	if sig, err := parseIdent(s); err == nil {
		return sig
	}
	lt := strings.IndexByte(s, '<')
	gt := strings.LastIndexByte(s, '>')
	if lt < 0 || gt < lt {
		return Signature{Name: strings.TrimSpace(s)}
	}
	return Signature{Name: strings.TrimSpace(s[:lt]), Email: s[lt+1 : gt]}
}

// encodeCommit writes a commit object in git's format.
func encodeCommit(tree Hash, parents []Hash, message string, author, committer Signature) []byte {
	var b bytes.Buffer
	b.WriteString("tree " + tree.String() + "\n")
	for _, p := range parents {
		b.WriteString("parent " + p.String() + "\n")
	}
	b.WriteString("author " + formatIdent(author) + "\n")
	b.WriteString("committer " + formatIdent(committer) + "\n")
	b.WriteString("\n")
	b.WriteString(message)
	return b.Bytes()
}

// formatIdent writes git's "Name <email> 1700000000 +0200".
func formatIdent(s Signature) string {
	_, off := s.When.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	name := strings.NewReplacer("<", "", ">", "", "\n", "").Replace(s.Name)
	email := strings.NewReplacer("<", "", ">", "", "\n", "").Replace(s.Email)
	return name + " <" + email + "> " + strconv.FormatInt(s.When.Unix(), 10) +
		fmt.Sprintf(" %c%02d%02d", sign, off/3600, off%3600/60)
}

// CommitAsGit writes a commit on the user's history as git commit would:
// signed when commit.gpgSign says so (git commit-tree -S, which reads
// gpg.format, user.signingKey and gpg.program as git does), and in
// i18n.commitEncoding when that names an encoding other than UTF-8. Without
// either it is written here, as WriteCommit does. Notes commits are never
// signed (git notes does not sign them either).
func (r *Repo) CommitAsGit(tree Hash, parents []Hash, message string, author, committer Signature) (Hash, error) {
	signV, _, err1 := r.Config("commit.gpgsign")
	enc, _, err2 := r.Config("i18n.commitencoding")
	if err := errors.Join(err1, err2); err != nil {
		return ZeroHash, err
	}
	sign, ok := configBool(signV)
	if !ok {
		return ZeroHash, fmt.Errorf("commit.gpgSign: %q is not a boolean", signV)
	}
	utf8 := enc == "" || strings.EqualFold(enc, "utf-8") || strings.EqualFold(enc, "utf8")
	if !sign && utf8 {
		return r.WriteCommit(tree, parents, message, author, committer)
	}
	if err := r.Flush(); err != nil {
		return ZeroHash, err
	}
	args := []string{"commit-tree", tree.String()}
	for _, p := range parents {
		args = append(args, "-p", p.String())
	}
	if sign {
		args = append(args, "-S")
	}
	env := append([]string(nil), r.env...)
	for _, who := range []struct {
		role string
		sig  Signature
	}{{"AUTHOR", author}, {"COMMITTER", committer}} {
		ident := formatIdent(who.sig)
		lt := strings.LastIndexByte(ident, '<')
		gt := strings.LastIndexByte(ident, '>')
		env = append(env, "GIT_"+who.role+"_NAME="+strings.TrimSpace(ident[:lt]),
			"GIT_"+who.role+"_EMAIL="+ident[lt+1:gt], "GIT_"+who.role+"_DATE=@"+strings.TrimSpace(ident[gt+1:]))
	}
	out, err := startGit(r.dir, env, true, args...).finish([]byte(message))
	if err != nil {
		return ZeroHash, fmt.Errorf("writing a commit as git would (signed or re-encoded): %w", err)
	}
	return ParseHash(strings.TrimSpace(string(out)))
}

// foreignEncoding reports whether a commit's encoding header names an
// encoding other than UTF-8 (its message is then in that encoding, and git
// re-encodes it for its output).
func foreignEncoding(enc string) bool {
	e := strings.ToLower(enc)
	return e != "" && e != "utf-8" && e != "utf8"
}

// reencode puts into UTF-8 the messages of the commits whose encoding
// header names another encoding (ISO-8859-1, say): git log re-encodes
// them, as it does for its own output (it knows every encoding iconv
// does). One that git cannot re-encode is left as it is, its invalid
// UTF-8 shown as U+FFFD wherever it is printed. msgs[i] is hs[i]'s.
func (r *Repo) reencode(hs []Hash, set func(i int, msg string)) error {
	if len(hs) == 0 {
		return nil
	}
	args := []string{"log", "--no-walk=unsorted", "--encoding=UTF-8", "-z", "--format=%H%n%B", "--end-of-options"}
	for _, h := range hs {
		args = append(args, h.String())
	}
	out, err := r.git(context.Background(), nil, append(args, "--")...)
	if err != nil {
		return err
	}
	at := map[Hash][]int{}
	for i, h := range hs {
		at[h] = append(at[h], i)
	}
	for _, rec := range bytes.Split(out, []byte{0}) {
		name, msg, ok := bytes.Cut(rec, []byte("\n"))
		if !ok {
			continue
		}
		h, err := ParseHash(string(name))
		if err != nil {
			continue
		}
		for _, i := range at[h] {
			set(i, string(msg))
		}
	}
	return nil
}

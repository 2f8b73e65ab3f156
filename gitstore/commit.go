package gitstore

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// parseCommit reads a commit object in git's format: headers (tree, parent,
// author, committer, and any others, with continuation lines starting with
// a space), a blank line, the message.
func parseCommit(h Hash, data []byte) (CommitInfo, error) {
	ci := CommitInfo{Hash: h}
	bad := func(what string) (CommitInfo, error) {
		return CommitInfo{}, fmt.Errorf("reading commit %s: malformed %s", h.Short(), what)
	}
	var haveTree bool
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return bad("header")
		}
		line := data[:nl]
		data = data[nl+1:]
		if len(line) == 0 {
			ci.Message = string(data)
			break
		}
		if line[0] == ' ' {
			continue // continuation of a multi-line header (gpgsig, mergetag)
		}
		key, val, _ := bytes.Cut(line, []byte(" "))
		switch string(key) {
		case "tree":
			t, err := ParseHash(string(val))
			if err != nil {
				return bad("tree")
			}
			ci.Tree, haveTree = t, true
		case "parent":
			p, err := ParseHash(string(val))
			if err != nil {
				return bad("parent")
			}
			ci.Parents = append(ci.Parents, p)
		case "author":
			ci.Author = lenientIdent(string(val))
		case "committer":
			ci.Committer = lenientIdent(string(val))
		}
	}
	if !haveTree {
		return bad("commit: no tree")
	}
	return ci, nil
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

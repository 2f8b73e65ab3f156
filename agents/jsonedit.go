package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// A settings file is edited in place: what git-evolve adds is spliced into
// the bytes the user wrote, and what it takes out is cut from them, so that
// every key, value, comment-free layout and order of the user's stays as
// it was. The parser below only finds where each value starts and ends.

// MaxSettings is the largest settings file read (1 MiB): an agent's
// settings are a few KiB.
const MaxSettings = 1 << 20

// maxDepth bounds how deeply a settings file may nest.
const maxDepth = 256

// node is a JSON value's place in the text: [start, end).
type node struct {
	kind       byte // '{', '[', '"', '0' (number), 'l' (literal)
	start, end int
	members    []member // of an object
	elems      []*node  // of an array
}

type member struct {
	key      string
	keyStart int
	value    *node
}

// ErrNotJSON is returned for a settings file that is not a JSON object.
var ErrNotJSON = errors.New("not a JSON object")

type parser struct {
	s   []byte
	pos int
}

// parseDoc parses a whole settings file, which must be an object.
func parseDoc(s []byte) (*node, error) {
	if len(s) > MaxSettings {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrNotJSON, MaxSettings)
	}
	p := &parser{s: s}
	p.space()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(s) {
		return nil, fmt.Errorf("%w: text after the value at byte %d", ErrNotJSON, p.pos)
	}
	if n.kind != '{' {
		return nil, ErrNotJSON
	}
	return n, nil
}

func (p *parser) space() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) fail(what string) error {
	return fmt.Errorf("%w: %s at byte %d", ErrNotJSON, what, p.pos)
}

func (p *parser) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.fail("nested too deeply")
	}
	if p.pos >= len(p.s) {
		return nil, p.fail("unexpected end")
	}
	start := p.pos
	switch c := p.s[p.pos]; {
	case c == '{':
		n := &node{kind: '{', start: start}
		p.pos++
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		for {
			p.space()
			if p.pos >= len(p.s) || p.s[p.pos] != '"' {
				return nil, p.fail("a key expected")
			}
			ks := p.pos
			if err := p.str(); err != nil {
				return nil, err
			}
			var key string
			if err := json.Unmarshal(p.s[ks:p.pos], &key); err != nil {
				return nil, p.fail("a bad key")
			}
			p.space()
			if p.pos >= len(p.s) || p.s[p.pos] != ':' {
				return nil, p.fail("':' expected")
			}
			p.pos++
			p.space()
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, member{key: key, keyStart: ks, value: v})
			p.space()
			if p.pos < len(p.s) && p.s[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos < len(p.s) && p.s[p.pos] == '}' {
				p.pos++
				n.end = p.pos
				return n, nil
			}
			return nil, p.fail("',' or '}' expected")
		}
	case c == '[':
		n := &node{kind: '[', start: start}
		p.pos++
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == ']' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		for {
			p.space()
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
			p.space()
			if p.pos < len(p.s) && p.s[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos < len(p.s) && p.s[p.pos] == ']' {
				p.pos++
				n.end = p.pos
				return n, nil
			}
			return nil, p.fail("',' or ']' expected")
		}
	case c == '"':
		if err := p.str(); err != nil {
			return nil, err
		}
		return &node{kind: '"', start: start, end: p.pos}, nil
	default:
		for p.pos < len(p.s) && strings.IndexByte(" \t\r\n,]}:", p.s[p.pos]) < 0 {
			p.pos++
		}
		tok := p.s[start:p.pos]
		if len(tok) == 0 || !json.Valid(tok) {
			return nil, p.fail("a value expected")
		}
		kind := byte('0')
		if tok[0] == 't' || tok[0] == 'f' || tok[0] == 'n' {
			kind = 'l'
		}
		return &node{kind: kind, start: start, end: p.pos}, nil
	}
}

func (p *parser) str() error {
	p.pos++ // the opening quote
	for p.pos < len(p.s) {
		switch c := p.s[p.pos]; {
		case c == '\\':
			p.pos += 2
		case c == '"':
			p.pos++
			return nil
		case c < 0x20:
			return p.fail("a control character in a string")
		default:
			p.pos++
		}
	}
	return p.fail("an unterminated string")
}

// get is the member key of object n, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for _, m := range n.members {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// lookup follows keys from n.
func (n *node) lookup(keys ...string) *node {
	for _, k := range keys {
		n = n.get(k)
	}
	return n
}

// text is the JSON text of a node.
func text(doc []byte, n *node) []byte { return doc[n.start:n.end] }

// indentOf is the white space before the line that holds position pos.
func indentOf(doc []byte, pos int) string {
	ls := bytes.LastIndexByte(doc[:pos], '\n') + 1
	i := ls
	for i < pos && (doc[i] == ' ' || doc[i] == '\t') {
		i++
	}
	return string(doc[ls:i])
}

// unitOf guesses the file's indentation unit: that of its first indented
// line, two spaces when there is none.
func unitOf(doc []byte) string {
	for _, line := range bytes.Split(doc, []byte("\n"))[1:] {
		i := 0
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i > 0 && i < len(line) {
			return string(line[:i])
		}
	}
	return "  "
}

// pretty is v as JSON, indented by unit, its inner lines prefixed by
// indent, as it will sit at that indentation.
func pretty(v any, indent, unit string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(indent, unit)
	_ = enc.Encode(v)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// insertIn adds an entry to container c (an object or an array) at its
// end: for an object, key and value; for an array, the value. It returns
// the new text, and whether it put the closing bracket on a line of its
// own (an empty container written "{}" or "[]"), which removeAt takes back.
func insertIn(doc []byte, c *node, key string, v any) ([]byte, bool) {
	unit := unitOf(doc)
	entry := func(indent string) []byte {
		val := pretty(v, indent, unit)
		if c.kind == '{' {
			k, _ := json.Marshal(key)
			return append(append(k, ": "...), val...)
		}
		return val
	}
	var last *node
	var firstStart int
	if c.kind == '{' && len(c.members) > 0 {
		last = c.members[len(c.members)-1].value
		firstStart = c.members[0].keyStart
	} else if c.kind == '[' && len(c.elems) > 0 {
		last = c.elems[len(c.elems)-1]
		firstStart = c.elems[0].start
	}
	var out []byte
	if last != nil {
		// After the last entry, on a line of its own when the first entry
		// has one, else on the same line.
		sep := []byte(", ")
		indent := ""
		if bytes.IndexByte(doc[c.start:firstStart], '\n') >= 0 {
			indent = indentOf(doc, firstStart)
			sep = []byte(",\n" + indent)
		}
		out = append(out, doc[:last.end]...)
		out = append(out, sep...)
		out = append(out, entry(indent)...)
		out = append(out, doc[last.end:]...)
		return out, false
	}
	// An empty container: the entry on a line of its own, then the white
	// space the container held, or a line break before the bracket.
	outer := indentOf(doc, c.start)
	inner := outer + unit
	out = append(out, doc[:c.start+1]...)
	out = append(out, "\n"+inner...)
	out = append(out, entry(inner)...)
	space := doc[c.start+1 : c.end-1]
	padded := len(space) == 0
	if padded {
		space = []byte("\n" + outer)
	}
	out = append(out, space...)
	out = append(out, doc[c.end-1:]...)
	return out, padded
}

// removeAt cuts entry i out of container c, with the separator that
// joined it to its neighbours; the last entry of a container that
// insertIn padded takes the padding with it. It returns the new text.
func removeAt(doc []byte, c *node, i int, padded bool) []byte {
	starts := func(j int) int {
		if c.kind == '{' {
			return c.members[j].keyStart
		}
		return c.elems[j].start
	}
	ends := func(j int) int {
		if c.kind == '{' {
			return c.members[j].value.end
		}
		return c.elems[j].end
	}
	n := len(c.elems)
	if c.kind == '{' {
		n = len(c.members)
	}
	var from, to int
	switch {
	case n == 1:
		// From the bracket to the entry's end: the white space after it
		// is what the container held before (or the padding).
		from, to = c.start+1, ends(i)
		if padded && string(doc[to:c.end-1]) == "\n"+indentOf(doc, c.start) {
			to = c.end - 1
		}
	case i == n-1:
		from, to = ends(i-1), ends(i)
	default:
		from, to = starts(i), starts(i+1)
	}
	out := append([]byte{}, doc[:from]...)
	return append(out, doc[to:]...)
}

// ensure returns doc with an object (or, as the last key, the value last)
// at keys under the top object, adding what is missing; rec keeps the
// containers it added to file.
func ensure(doc []byte, keys []string, last any, rec *Record, file string) ([]byte, error) {
	for i := range keys {
		root, err := parseDoc(doc)
		if err != nil {
			return nil, err
		}
		parent := root.lookup(keys[:i]...)
		if parent == nil || parent.kind != '{' {
			return nil, fmt.Errorf("%s is not an object", strings.Join(keys[:i], "."))
		}
		if parent.get(keys[i]) != nil {
			continue
		}
		var v any = map[string]any{}
		if i == len(keys)-1 {
			v = last
		}
		var padded bool
		doc, padded = insertIn(doc, parent, keys[i], v)
		rec.created(file, keys[:i+1])
		if padded {
			rec.pad(file, keys[:i])
		}
	}
	return doc, nil
}

// Record is what Install created, so that Remove takes out exactly that:
// the files and folders that were not there, and the lists and objects it
// added to a settings file that had none. The face keeps it (in the git
// directory); without it, Remove takes out what its removal leaves empty.
type Record struct {
	// Files are the files and folders (ending in /) Install created,
	// relative to the top.
	Files []string `json:"files,omitempty"`
	// Containers are, by file, the key paths of the lists and objects
	// Install added.
	Containers map[string][][]string `json:"containers,omitempty"`
	// Padded are, by file, the key paths of the empty lists and objects
	// Install wrote an entry into, closing them on a line of their own.
	Padded map[string][][]string `json:"padded,omitempty"`
}

func (r *Record) created(file string, keys []string) {
	if r != nil {
		r.Containers = addPath(r.Containers, file, keys)
	}
}

func (r *Record) pad(file string, keys []string) {
	if r != nil {
		r.Padded = addPath(r.Padded, file, keys)
	}
}

func addPath(m map[string][][]string, file string, keys []string) map[string][][]string {
	if m == nil {
		m = map[string][][]string{}
	}
	if !slices.ContainsFunc(m[file], func(k []string) bool { return slices.Equal(k, keys) }) {
		m[file] = append(m[file], slices.Clone(keys))
	}
	return m
}

// padded reports whether Install padded the container at keys of file:
// true without a record when it is not the top object.
func (r *Record) padded(file string, keys []string) bool {
	if r == nil {
		return true
	}
	return slices.ContainsFunc(r.Padded[file], func(k []string) bool { return slices.Equal(k, keys) })
}

func (r *Record) createdFile(rel string) {
	if r != nil && !slices.Contains(r.Files, rel) {
		r.Files = append(r.Files, rel)
	}
}

// madeContainer reports whether Install added the container at keys of
// file: always true without a record.
func (r *Record) madeContainer(file string, keys []string) bool {
	if r == nil {
		return true
	}
	return slices.ContainsFunc(r.Containers[file], func(k []string) bool { return slices.Equal(k, keys) })
}

// madeFile reports whether Install created the file or folder rel: always
// true without a record.
func (r *Record) madeFile(rel string) bool { return r == nil || slices.Contains(r.Files, rel) }

package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// scanner validates JSON and finds the spans of values without decoding
// them. It accepts exactly what encoding/json accepts (checked by
// FuzzScannerMatchesEncodingJSON) and is many times faster on records,
// which are flat objects of short strings and numbers.
type scanner struct {
	data   []byte
	pos    int
	depth  int
	spaced bool // whitespace was skipped somewhere
}

const maxDepth = 10000 // as encoding/json

func (s *scanner) fail(what string) error {
	if s.pos >= len(s.data) {
		return fmt.Errorf("unexpected end of JSON input")
	}
	return fmt.Errorf("invalid character %q %s at byte %d", s.data[s.pos], what, s.pos+1)
}

func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
			s.spaced = true
		default:
			return
		}
	}
}

// value scans one JSON value starting at s.pos (after whitespace) and
// returns its span.
func (s *scanner) value() (start, end int, err error) {
	s.ws()
	start = s.pos
	if s.pos >= len(s.data) {
		return 0, 0, s.fail("")
	}
	switch c := s.data[s.pos]; {
	case c == '"':
		_, err = s.str()
	case c == '{':
		err = s.object(nil)
	case c == '[':
		err = s.array()
	case c == '-' || c >= '0' && c <= '9':
		err = s.number()
	case c == 't':
		err = s.literal("true")
	case c == 'f':
		err = s.literal("false")
	case c == 'n':
		err = s.literal("null")
	default:
		err = s.fail("looking for beginning of value")
	}
	return start, s.pos, err
}

func (s *scanner) literal(lit string) error {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		i := 0
		for ; i < len(lit) && s.pos < len(s.data) && s.data[s.pos] == lit[i]; i++ {
			s.pos++
		}
		return s.fail(fmt.Sprintf("in literal %s (expecting %q)", lit, lit[i]))
	}
	s.pos += len(lit)
	return nil
}

// str scans a string; escaped reports whether it holds escapes or bytes
// that decoding would change (non-ASCII is checked by the caller).
func (s *scanner) str() (escaped bool, err error) {
	s.pos++ // opening quote
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return escaped, nil
		case c == '\\':
			escaped = true
			s.pos++
			if s.pos >= len(s.data) {
				return escaped, s.fail("")
			}
			switch s.data[s.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos++
			case 'u':
				s.pos++
				for i := 0; i < 4; i++ {
					if s.pos >= len(s.data) || !isHexDigit(s.data[s.pos]) {
						return escaped, s.fail("in \\u hexadecimal character escape")
					}
					s.pos++
				}
			default:
				return escaped, s.fail("in string escape code")
			}
		case c < 0x20:
			return escaped, s.fail("in string literal")
		default:
			s.pos++
		}
	}
	return escaped, s.fail("")
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (s *scanner) number() error {
	if s.data[s.pos] == '-' {
		s.pos++
	}
	if s.pos >= len(s.data) {
		return s.fail("")
	}
	switch c := s.data[s.pos]; {
	case c == '0':
		s.pos++
	case c >= '1' && c <= '9':
		for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
			s.pos++
		}
	default:
		return s.fail("in numeric literal")
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if s.pos >= len(s.data) || s.data[s.pos] < '0' || s.data[s.pos] > '9' {
			return s.fail("after decimal point in numeric literal")
		}
		for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
			s.pos++
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if s.pos >= len(s.data) || s.data[s.pos] < '0' || s.data[s.pos] > '9' {
			return s.fail("in exponent of numeric literal")
		}
		for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
			s.pos++
		}
	}
	return nil
}

func (s *scanner) array() error {
	if s.depth++; s.depth > maxDepth {
		return fmt.Errorf("exceeded max depth")
	}
	defer func() { s.depth-- }()
	s.pos++ // [
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return nil
	}
	for {
		if _, _, err := s.value(); err != nil {
			return err
		}
		s.ws()
		if s.pos >= len(s.data) {
			return s.fail("")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.fail("after array element")
		}
	}
}

// member is one key/value pair of an object, as spans of the input.
type member struct {
	kstart, kend int  // the key, quotes included
	kesc         bool // the key holds escapes
	start, end   int  // the value
}

// name returns the member's key without allocating when it has no escapes;
// use it only for lookups.
func (m member) name(data []byte) []byte {
	if m.kesc {
		return []byte(decodeString(data[m.kstart:m.kend], true))
	}
	return data[m.kstart+1 : m.kend-1]
}

// key returns the member's key as a string.
func (m member) key(data []byte) string {
	return decodeString(data[m.kstart:m.kend], m.kesc)
}

// object scans an object; when members is non-nil it receives each member.
func (s *scanner) object(members *[]member) error {
	if s.depth++; s.depth > maxDepth {
		return fmt.Errorf("exceeded max depth")
	}
	defer func() { s.depth-- }()
	s.pos++ // {
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		s.ws()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.fail("looking for beginning of object key string")
		}
		ks := s.pos
		esc, err := s.str()
		if err != nil {
			return err
		}
		ke := s.pos
		s.ws()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.fail("after object key")
		}
		s.pos++
		vs, ve, err := s.value()
		if err != nil {
			return err
		}
		if members != nil {
			*members = append(*members, member{ks, ke, esc, vs, ve})
		}
		s.ws()
		if s.pos >= len(s.data) {
			return s.fail("")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.fail("after object key:value pair")
		}
	}
}

// decodeString decodes a scanned string token (quotes included).
func decodeString(tok []byte, escaped bool) string {
	inner := tok[1 : len(tok)-1]
	if !escaped && utf8.Valid(inner) {
		return string(inner)
	}
	var out string
	_ = json.Unmarshal(tok, &out) // the scanner has validated it
	return out
}

// topObject scans data as exactly one JSON object (surrounding whitespace
// allowed) and returns its members in order. Later duplicates of a key win,
// as in encoding/json.
func topObject(data []byte) ([]member, error) {
	return topObjectInto(make([]member, 0, 16), data)
}

// topObjectInto is topObject appending the members to dst, so that a
// caller reading many lines reuses one slice.
func topObjectInto(dst []member, data []byte) ([]member, error) {
	s := scanner{data: data}
	s.ws()
	if s.pos >= len(data) || data[s.pos] != '{' {
		if s.pos < len(data) {
			if _, _, err := s.value(); err != nil {
				return nil, err
			}
		}
		return nil, errNotObject
	}
	members := dst[:0]
	if err := s.object(&members); err != nil {
		return nil, err
	}
	s.ws()
	if s.pos != len(data) {
		return nil, errTrailing
	}
	return members, nil
}

var (
	errNotObject = errors.New("not a JSON object")
	errTrailing  = errors.New("more than one JSON value on the line")
)

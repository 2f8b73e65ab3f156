package gitstore

import (
	"bytes"
	"encoding/hex"
	"fmt"
)

// Hash is a SHA-1 object name.
type Hash [20]byte

// ZeroHash is the all-zero object name; it stands for "no object".
var ZeroHash Hash

// ParseHash parses a full 40-digit hexadecimal object name.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 40 {
		return h, fmt.Errorf("not a full object name: %q", s)
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, fmt.Errorf("not a full object name: %q", s)
	}
	return h, nil
}

// String returns the 40-digit lowercase hexadecimal name.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// Short returns the first 7 digits of the name.
func (h Hash) Short() string { return hex.EncodeToString(h[:4])[:7] }

// Compare orders object names as their hex does (slices.SortFunc with
// Hash.Compare sorts them as git lists them).
func (h Hash) Compare(o Hash) int { return bytes.Compare(h[:], o[:]) }

// IsZero reports whether h is ZeroHash.
func (h Hash) IsZero() bool { return h == ZeroHash }

// isHex reports whether s is made only of lowercase hexadecimal digits.
func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

package redact

// keywords finds every place in a text where one of a set of words
// occurs, ASCII letters in either case, in one pass over the text (an
// Aho-Corasick automaton, made a table of transitions over the bytes the
// words use). A rule's regular expression runs only near the places where
// one of its words occurs: a text is read once for all the words, not
// once for each of hundreds of expressions.
type keywords struct {
	words []string
	// class maps a byte to its column in next: 0 for a byte no word has,
	// upper and lower case letters to the same column.
	class [256]uint8
	width int
	// next is the state after each state and column: state*width+column.
	next []int32
	// out lists the words that end at each state (by index in words),
	// those of shorter suffixes included.
	out [][]int32
}

// newKeywords makes the automaton of words, which are matched in either
// case of their ASCII letters. A word must not be empty.
func newKeywords(words []string) *keywords {
	k := &keywords{words: words}
	cols := 1
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			c := lower(w[i])
			if k.class[c] == 0 {
				k.class[c] = uint8(cols)
				cols++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		k.class[c] = k.class[c+'a'-'A']
	}
	k.width = cols
	// The trie, with -1 for no edge.
	trie := [][]int32{k.row()}
	k.out = [][]int32{nil}
	for wi, w := range words {
		s := int32(0)
		for i := 0; i < len(w); i++ {
			col := k.class[lower(w[i])]
			if trie[s][col] < 0 {
				trie[s][col] = int32(len(trie))
				trie = append(trie, k.row())
				k.out = append(k.out, nil)
			}
			s = trie[s][col]
		}
		k.out[s] = append(k.out[s], int32(wi))
	}
	// Breadth first: each state's failure is the longest proper suffix of
	// its word that is a state; a missing edge goes where the failure's
	// does.
	k.next = make([]int32, len(trie)*cols)
	fail := make([]int32, len(trie))
	queue := make([]int32, 0, len(trie))
	for col := 0; col < cols; col++ {
		if t := trie[0][col]; t >= 0 {
			k.next[col] = t
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		k.out[s] = append(k.out[s], k.out[fail[s]]...)
		for col := 0; col < cols; col++ {
			t := trie[s][col]
			if t < 0 {
				k.next[int(s)*cols+col] = k.next[int(fail[s])*cols+col]
				continue
			}
			fail[t] = k.next[int(fail[s])*cols+col]
			k.next[int(s)*cols+col] = t
			queue = append(queue, t)
		}
	}
	return k
}

func (k *keywords) row() []int32 {
	r := make([]int32, k.width)
	for i := range r {
		r[i] = -1
	}
	return r
}

// scan calls found with the index of each word that occurs in s and where
// it starts, in the order the occurrences end.
func (k *keywords) scan(s string, found func(word, at int)) {
	state := int32(0)
	for i := 0; i < len(s); i++ {
		state = k.next[int(state)*k.width+int(k.class[s[i]])]
		for _, w := range k.out[state] {
			found(int(w), i+1-len(k.words[w]))
		}
	}
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

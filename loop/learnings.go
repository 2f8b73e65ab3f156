package loop

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/git-evolve/git-evolve/goals"
)

// LearningsDir is where the seeds' loops keep what earlier cycles learned.
const LearningsDir = ".agents/learnings"

// Bounds of what the brief quotes from the learnings: the files are the
// agent's to write, so everything read from them is bounded.
const (
	maxLearningFiles = 500
	maxLearningBytes = 1 << 20 // a file's first MiB
	maxLearningLines = 20
	maxLearningLine  = 300
	maxKeywords      = 12
)

// Learning is a line of .agents/learnings/** that names a keyword of the
// last failed gate.
type Learning struct {
	File string `json:"file"` // relative to the top of the working tree
	Line int    `json:"line"`
	Text string `json:"text"`
}

var (
	keywordRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*`) })
	// stopwords are words every failure says: they match everything. Made
	// at the first use, not when the process starts.
	stopwords = sync.OnceValue(func() map[string]bool {
		out := map[string]bool{}
		for _, w := range strings.Fields(`fail failed fails failure failures pass passed gate goal goals test tests
		error errors exit exited status code with that this from than then when were have has been what which
		into over after before there their they them does done none some more most other line lines output
		file files run runs running ran true false null nil cycle cycles regressed regression blocked should
		could would expected got want wanted value values returned return`) {
			out[w] = true
		}
		return out
	})
)

// failureKeywords are the words of a failed gate a learning would name: its
// goals' and commands' names, and the words of its reasons and excerpts,
// the most frequent first.
func failureKeywords(f FailureRecord) []string {
	count := map[string]int{}
	first := map[string]int{}
	var add func(text string, weight int)
	add = func(text string, weight int) {
		for _, w := range keywordRe().FindAllString(text, -1) {
			w = strings.ToLower(strings.Trim(w, "-."))
			if len(w) < 4 || len(w) > 60 || stopwords()[w] {
				continue
			}
			if _, ok := first[w]; !ok {
				first[w] = len(first)
			}
			count[w] += weight
			if weight > 1 && strings.ContainsAny(w, "-.") {
				add(strings.NewReplacer("-", " ", ".", " ").Replace(w), 1) // a name's parts
			}
		}
	}
	for _, g := range f.Regressed {
		add(g, 5)
	}
	add(f.Gate, 3)
	for _, x := range f.Failures {
		add(x.Name, 4)
		add(x.Reason, 2)
		add(x.Excerpt, 1)
	}
	words := make([]string, 0, len(count))
	for w := range count {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		if count[words[i]] != count[words[j]] {
			return count[words[i]] > count[words[j]]
		}
		return first[words[i]] < first[words[j]]
	})
	if len(words) > maxKeywords {
		words = words[:maxKeywords]
	}
	return words
}

// matchLearnings are the lines of the learnings under top that name one of
// the keywords (as a word, in any case), in the files' order, bounded.
func matchLearnings(top string, keywords []string) []Learning {
	if len(keywords) == 0 {
		return nil
	}
	quoted := make([]string, len(keywords))
	for i, k := range keywords {
		quoted[i] = regexp.QuoteMeta(k)
	}
	re := regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_])(?:` + strings.Join(quoted, "|") + `)(?:$|[^A-Za-z0-9_])`)
	root := filepath.Join(top, filepath.FromSlash(LearningsDir))
	var files []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(files) >= maxLearningFiles {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	var out []Learning
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		rel, _ := filepath.Rel(top, p)
		sc := bufio.NewScanner(io.LimitReader(f, maxLearningBytes))
		sc.Buffer(make([]byte, 64<<10), 64<<10)
		n := 0
		for sc.Scan() && len(out) < maxLearningLines {
			n++
			line := sc.Bytes()
			if !utf8.Valid(line) || !re.Match(line) {
				continue
			}
			out = append(out, Learning{File: filepath.ToSlash(rel), Line: n, Text: cleanLine(string(line))})
		}
		f.Close()
		if len(out) >= maxLearningLines {
			break
		}
	}
	return out
}

// cleanLine is a learning's line as a prompt may quote it: terminal escapes
// and control characters removed, trimmed, bounded.
func cleanLine(s string) string {
	s = strings.TrimSpace(goals.Excerpt(s))
	if len(s) > maxLearningLine {
		cut := maxLearningLine
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

package goals

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// PassWhen is a goal's pass_when condition: the check passes when it holds
// of the check's exit code and its output (trimmed), whatever the exit code
// says. The language is small and never runs anything:
//
//	condition  = or
//	or         = and { "||" and }
//	and        = not { "&&" not }
//	not        = "!" not | "(" or ")" | comparison
//	comparison = operand ( "==" | "!=" | "<" | "<=" | ">" | ">=" ) operand
//	operand    = "exit_code" | "output" | 'text' | "text" | number
//
// Two operands that both read as numbers compare as numbers ("10" > "9");
// otherwise they compare as text.
type PassWhen struct {
	Source string
	root   cond
}

// PassWhenError is a pass_when that does not parse: what is wrong, and
// the column (from 1) of the expression where it is.
type PassWhenError struct {
	Col int
	Msg string
}

func (e *PassWhenError) Error() string { return fmt.Sprintf("%s at column %d", e.Msg, e.Col) }

// ParsePassWhen parses a pass_when condition.
func ParsePassWhen(src string) (*PassWhen, error) {
	toks, err := lexPassWhen(src)
	if err != nil {
		return nil, err
	}
	p := &pwParser{toks: toks, end: len(src) + 1}
	c, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		return nil, &PassWhenError{p.toks[p.i].col, fmt.Sprintf("unexpected %q", p.toks[p.i].text)}
	}
	return &PassWhen{Source: src, root: c}, nil
}

// Holds reports whether the condition holds of a check that exited with
// exitCode and printed output.
func (p *PassWhen) Holds(exitCode int, output string) bool {
	return p.root.eval(exitCode, strings.TrimSpace(output))
}

type pwToken struct {
	kind byte // 'i' name, 's' text, 'n' number, 'o' operator or parenthesis
	text string
	col  int
}

func lexPassWhen(src string) ([]pwToken, error) {
	var toks []pwToken
	for i := 0; i < len(src); {
		c, col := src[i], i+1
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '\'' || c == '"':
			j := strings.IndexByte(src[i+1:], c)
			if j < 0 {
				return nil, &PassWhenError{col, "text without its closing quote"}
			}
			toks = append(toks, pwToken{'s', src[i+1 : i+1+j], col})
			i += j + 2
		case c >= '0' && c <= '9' || c == '-' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i + 1
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.') {
				j++
			}
			if _, err := strconv.ParseFloat(src[i:j], 64); err != nil {
				return nil, &PassWhenError{col, fmt.Sprintf("%q is not a number", src[i:j])}
			}
			toks = append(toks, pwToken{'n', src[i:j], col})
			i = j
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			if name := src[i:j]; name != "exit_code" && name != "output" {
				return nil, &PassWhenError{col, fmt.Sprintf("unknown name %q (exit_code and output are known)", name)}
			}
			toks = append(toks, pwToken{'i', src[i:j], col})
			i = j
		default:
			op := ""
			for _, o := range []string{"==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "(", ")"} {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil, &PassWhenError{col, fmt.Sprintf("unexpected %q", string(c))}
			}
			toks = append(toks, pwToken{'o', op, col})
			i += len(op)
		}
	}
	return toks, nil
}

var comparisons = map[string]bool{"==": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true}

// maxPassWhenDepth bounds nesting: a hostile file cannot exhaust the stack.
const maxPassWhenDepth = 100

type pwParser struct {
	toks []pwToken
	i    int
	end  int // the column past the end, for errors there
}

func (p *pwParser) peek(text string) bool {
	return p.i < len(p.toks) && p.toks[p.i].kind == 'o' && p.toks[p.i].text == text
}

func (p *pwParser) col() int {
	if p.i < len(p.toks) {
		return p.toks[p.i].col
	}
	return p.end
}

func (p *pwParser) or(depth int) (cond, error) {
	left, err := p.and(depth)
	for err == nil && p.peek("||") {
		p.i++
		var right cond
		if right, err = p.and(depth); err == nil {
			left = orCond{left, right}
		}
	}
	return left, err
}

func (p *pwParser) and(depth int) (cond, error) {
	left, err := p.not(depth)
	for err == nil && p.peek("&&") {
		p.i++
		var right cond
		if right, err = p.not(depth); err == nil {
			left = andCond{left, right}
		}
	}
	return left, err
}

func (p *pwParser) not(depth int) (cond, error) {
	if depth > maxPassWhenDepth {
		return nil, &PassWhenError{p.col(), "nested too deep"}
	}
	switch {
	case p.peek("!"):
		p.i++
		c, err := p.not(depth + 1)
		return notCond{c}, err
	case p.peek("("):
		p.i++
		c, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if !p.peek(")") {
			return nil, &PassWhenError{p.col(), "a ( without its )"}
		}
		p.i++
		return c, nil
	}
	left, err := p.operand()
	if err != nil {
		return nil, err
	}
	if p.i >= len(p.toks) || p.toks[p.i].kind != 'o' || !comparisons[p.toks[p.i].text] {
		return nil, &PassWhenError{p.col(), "a comparison (==, !=, <, <=, > or >=) is missing"}
	}
	op := p.toks[p.i].text
	p.i++
	right, err := p.operand()
	if err != nil {
		return nil, err
	}
	return cmpCond{op, left, right}, nil
}

func (p *pwParser) operand() (pwToken, error) {
	if p.i >= len(p.toks) || p.toks[p.i].kind == 'o' {
		return pwToken{}, &PassWhenError{p.col(), "exit_code, output, a text or a number is missing"}
	}
	t := p.toks[p.i]
	p.i++
	return t, nil
}

// finite reads a value as a finite number ("NaN" and "Inf" are text).
func finite(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}

type cond interface {
	eval(exitCode int, output string) bool
}

type orCond struct{ a, b cond }
type andCond struct{ a, b cond }
type notCond struct{ a cond }
type cmpCond struct {
	op   string
	a, b pwToken
}

func (c orCond) eval(e int, o string) bool  { return c.a.eval(e, o) || c.b.eval(e, o) }
func (c andCond) eval(e int, o string) bool { return c.a.eval(e, o) && c.b.eval(e, o) }
func (c notCond) eval(e int, o string) bool { return !c.a.eval(e, o) }

func (c cmpCond) eval(e int, o string) bool {
	value := func(t pwToken) string {
		switch {
		case t.kind == 'i' && t.text == "exit_code":
			return strconv.Itoa(e)
		case t.kind == 'i':
			return o
		}
		return t.text
	}
	a, b := value(c.a), value(c.b)
	cmp := strings.Compare(a, b)
	x, okA := finite(a)
	y, okB := finite(b)
	if okA && okB {
		switch {
		case x < y:
			cmp = -1
		case x > y:
			cmp = 1
		default:
			cmp = 0
		}
	}
	switch c.op {
	case "==":
		return cmp == 0
	case "!=":
		return cmp != 0
	case "<":
		return cmp < 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	}
	return cmp >= 0
}

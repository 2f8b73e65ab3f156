package goals

import (
	"errors"
	"testing"
)

func TestPassWhen(t *testing.T) {
	for _, tt := range []struct {
		expr   string
		exit   int
		output string
		want   bool
	}{
		{"output == '0'", 1, " 0\n", true},
		{"output == '0'", 0, "3", false},
		{"exit_code == 0 && output == '0'", 0, "0", true},
		{"exit_code == 0 && output == '0'", 2, "0", false},
		{"output >= '1'", 0, "10", true}, // numbers: 10 >= 1
		{"output > '9'", 0, "10", true},  // as text "10" < "9"; as numbers 10 > 9
		{"output < 'b'", 0, "a", true},   // text
		{`output == "ok"`, 0, "ok", true},
		{"!(exit_code != 0) || output == 'x'", 3, "x", true},
		{"!(exit_code != 0) || output == 'x'", 3, "y", false},
		{"exit_code <= -1", -2, "", true},
		{"output == 'NaN'", 0, "NaN", true}, // NaN is text
		{"output != 'NaN'", 0, "1", true},
		{"( exit_code == 1 ) && ( output == '' )", 1, "  ", true},
	} {
		pw, err := ParsePassWhen(tt.expr)
		if err != nil {
			t.Fatalf("%q: %v", tt.expr, err)
		}
		if got := pw.Holds(tt.exit, tt.output); got != tt.want {
			t.Errorf("%q with exit %d, output %q: %v, want %v", tt.expr, tt.exit, tt.output, got, tt.want)
		}
	}
}

func TestPassWhenErrors(t *testing.T) {
	for expr, col := range map[string]int{
		"output = '0'":         8,
		"output == '0":         11,
		"outputs == '0'":       1,
		"output == '0' &&":     17,
		"(output == '0'":       15,
		"output":               7,
		"== 1":                 1,
		"exit_code == 1 1":     16,
		"exit_code == 1 && ; ": 19,
		"output == 1.2.3":      11,
		"":                     1,
	} {
		_, err := ParsePassWhen(expr)
		var pe *PassWhenError
		if !errors.As(err, &pe) {
			t.Errorf("%q parses (%v)", expr, err)
			continue
		}
		if pe.Col != col {
			t.Errorf("%q: error %q at column %d, want %d", expr, pe.Msg, pe.Col, col)
		}
	}
}

func FuzzPassWhen(f *testing.F) {
	for _, s := range []string{"output == '0'", "exit_code == 0 && output == '0'", "!(a)", "((((", "output >= '1' || !(exit_code != 2)"} {
		f.Add(s, 0, "0")
	}
	f.Fuzz(func(t *testing.T, expr string, exit int, output string) {
		pw, err := ParsePassWhen(expr)
		if err != nil {
			var pe *PassWhenError
			if !errors.As(err, &pe) || pe.Col < 1 || pe.Col > len(expr)+1 {
				t.Fatalf("%q: error %v (column out of the expression)", expr, err)
			}
			return
		}
		pw.Holds(exit, output)
	})
}

package gate

import (
	"reflect"
	"testing"
)

func TestSubstantive(t *testing.T) {
	tests := []struct {
		paths []string
		extra []string
		want  []string
	}{
		{[]string{".agents/evolve/notes.md", "GOALS.yaml", "GOALS.md"}, nil, nil},
		{[]string{".agents/x", "main.go"}, nil, []string{"main.go"}},
		{[]string{"docs/GOALS.yaml", ".agentsx/a", "sub/.agents/b"}, nil, []string{"docs/GOALS.yaml", ".agentsx/a", "sub/.agents/b"}},
		{[]string{"CHANGELOG.md", "src/a.go"}, []string{"CHANGELOG.md"}, []string{"src/a.go"}},
		{[]string{"gen/x.pb.go", "gen/y/z.go", "a.go"}, []string{"gen/**"}, []string{"a.go"}},
		{[]string{"a_test.go", "b.go"}, []string{"*_test.go"}, []string{"b.go"}},
	}
	for _, tt := range tests {
		got := Substantive(tt.paths, tt.extra...)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Substantive(%q, %q) = %q, want %q", tt.paths, tt.extra, got, tt.want)
		}
	}
}

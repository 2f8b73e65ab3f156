package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/git-evolve/git-evolve/internal/atomicfile"
)

// Change is one thing Install or Remove did, or left alone and why.
type Change struct {
	// Path is the file, relative to the working tree's top.
	Path string
	// Message says what was done, or (Hint) what was left and why.
	Message string
	Hint    bool
}

// skillMarker starts the line of the skill that says who wrote it: a
// skill file with it is git-evolve's to update and take out.
const skillMarker = "<!-- written by git evolve init --agent"

// SkillPath is where an agent's skill file goes, under the top.
func (a *Agent) SkillPath() string {
	return filepath.ToSlash(filepath.Join(a.Skills, SkillName, "SKILL.md"))
}

// mcpEntry is git-evolve's MCP server entry.
func mcpEntry() ordered {
	return ordered{{"command", "git"}, {"args", []string{"evolve", "mcp"}}}
}

// codexMCP is git-evolve's MCP server table in Codex's config.toml.
const codexMCP = "[mcp_servers." + MCPName + "]\ncommand = \"git\"\nargs = [\"evolve\", \"mcp\"]\n"

// Install adds git-evolve's skill, MCP server and hooks for agent a to the
// working tree at top, keeping everything the user has. skill is the
// skill file's content; rec, when not nil, gets what Install created, for
// Remove. Running it again changes nothing.
func Install(top string, a *Agent, skill []byte, rec *Record) ([]Change, error) {
	var out []Change
	c, err := installSkill(top, a, skill, rec)
	out = append(out, c...)
	if err != nil {
		return out, err
	}
	if a.MCPTOML {
		c, err = installTOML(top, a, rec)
	} else {
		c, err = editJSON(top, a.MCPFile, a.skeleton(a.MCPFile), rec, func(doc []byte) ([]byte, []string, error) {
			return addMember(doc, []string{"mcpServers"}, MCPName, mcpEntry(), rec, a.MCPFile)
		})
	}
	out = append(out, c...)
	if err != nil {
		return out, err
	}
	c, err = editJSON(top, a.HooksFile, a.skeleton(a.HooksFile), rec, func(doc []byte) ([]byte, []string, error) {
		var said []string
		for _, ev := range Events {
			var s []string
			var err error
			if doc, s, err = a.addHook(doc, ev, rec); err != nil {
				return nil, nil, err
			}
			said = append(said, s...)
		}
		for _, rule := range a.Deny {
			var s []string
			var err error
			if doc, s, err = addElem(doc, []string{"permissions", "deny"}, rule, rec, a.HooksFile); err != nil {
				return nil, nil, err
			}
			said = append(said, s...)
		}
		return doc, said, nil
	})
	return append(out, c...), err
}

// skeleton is what a new settings file holds before anything is added.
func (a *Agent) skeleton(file string) ordered {
	if file == a.HooksFile {
		return a.Skeleton
	}
	return nil
}

func installSkill(top string, a *Agent, skill []byte, rec *Record) ([]Change, error) {
	rel := a.SkillPath()
	path := filepath.Join(top, rel)
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := mkdirs(top, filepath.Dir(path), rec); err != nil {
			return nil, err
		}
		if err := writeFile(path, skill); err != nil {
			return nil, err
		}
		rec.createdFile(rel)
		return []Change{{Path: rel, Message: "wrote the " + SkillName + " skill: " + rel}}, nil
	case err != nil:
		return nil, err
	case bytes.Equal(old, skill):
		return nil, nil
	case !bytes.Contains(old, []byte(skillMarker)):
		return []Change{{Path: rel, Hint: true, Message: rel + " is not git-evolve's: left as it is (git evolve help --skill prints git-evolve's)"}}, nil
	}
	if err := writeFile(path, skill); err != nil {
		return nil, err
	}
	return []Change{{Path: rel, Message: "updated the " + SkillName + " skill: " + rel}}, nil
}

func installTOML(top string, a *Agent, rec *Record) ([]Change, error) {
	path := filepath.Join(top, a.MCPFile)
	old, err := readBounded(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if bytes.Contains(old, []byte("[mcp_servers."+MCPName+"]")) {
		return nil, nil
	}
	text := append([]byte{}, old...)
	if len(text) > 0 {
		if text[len(text)-1] != '\n' {
			text = append(text, '\n')
		}
		text = append(text, '\n')
	}
	text = append(text, codexMCP...)
	if err := mkdirs(top, filepath.Dir(path), rec); err != nil {
		return nil, err
	}
	if err := writeFile(path, text); err != nil {
		return nil, err
	}
	if len(old) == 0 {
		rec.createdFile(a.MCPFile)
	}
	return []Change{{Path: a.MCPFile, Message: fmt.Sprintf("added the %s MCP server to %s", MCPName, a.MCPFile)}}, nil
}

// editJSON reads a settings file (a new one holds skeleton), lets edit
// change it and writes it back when it changed. edit says what it did.
func editJSON(top, rel string, skeleton ordered, rec *Record, edit func([]byte) ([]byte, []string, error)) ([]Change, error) {
	path := filepath.Join(top, rel)
	old, err := readBounded(path)
	doc := old
	created := errors.Is(err, fs.ErrNotExist)
	if created {
		doc = append(pretty(skeleton, "", "  "), '\n')
		if skeleton == nil {
			doc = []byte("{}\n")
		}
	} else if err != nil {
		return nil, err
	}
	if _, err := parseDoc(doc); err != nil {
		return nil, fmt.Errorf("%s: %w: fix it or move it away, then run this again", rel, err)
	}
	doc, said, err := edit(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if len(said) == 0 {
		return nil, nil
	}
	if !json.Valid(doc) {
		return nil, fmt.Errorf("%s: the edit made invalid JSON (a bug): the file is left as it was", rel)
	}
	if err := mkdirs(top, filepath.Dir(path), rec); err != nil {
		return nil, err
	}
	if err := writeFile(path, doc); err != nil {
		return nil, err
	}
	if created {
		rec.createdFile(rel)
	}
	var out []Change
	for _, s := range said {
		out = append(out, Change{Path: rel, Message: s + " to " + rel})
	}
	return out, nil
}

// addHook adds the hook of event ev unless one of git-evolve's is there.
func (a *Agent) addHook(doc []byte, ev Event, rec *Record) ([]byte, []string, error) {
	name := a.HookEvent(ev)
	doc, err := ensure(doc, []string{"hooks", name}, []any{}, rec, a.HooksFile)
	if err != nil {
		return nil, nil, err
	}
	root, _ := parseDoc(doc)
	list := root.lookup("hooks", name)
	if list.kind != '[' {
		return nil, nil, fmt.Errorf("hooks.%s is not a list", name)
	}
	for _, h := range a.hooksIn(doc, list) {
		if h.command == a.HookCommand(ev) {
			return doc, nil, nil
		}
	}
	doc, padded := insertIn(doc, list, "", a.hookEntry(ev))
	if padded {
		rec.pad(a.HooksFile, []string{"hooks", name})
	}
	return doc, []string{fmt.Sprintf("added the %s hook (%s)", name, a.HookCommand(ev))}, nil
}

// placedHook is a hook found in an event's list: its command, and where it
// is (group i of the list, hook j of the group; j < 0 in a flat list).
type placedHook struct {
	command string
	i, j    int
}

// hooksIn lists the hooks of an event's list.
func (a *Agent) hooksIn(doc []byte, list *node) []placedHook {
	var out []placedHook
	command := func(h *node) string {
		var s string
		if c := h.get("command"); c != nil && c.kind == '"' {
			_ = json.Unmarshal(text(doc, c), &s)
		}
		return s
	}
	for i, g := range list.elems {
		if a.Flat {
			out = append(out, placedHook{command(g), i, -1})
			continue
		}
		if hs := g.get("hooks"); hs != nil && hs.kind == '[' {
			for j, h := range hs.elems {
				out = append(out, placedHook{command(h), i, j})
			}
		}
	}
	return out
}

// addMember adds key to the object at keys unless it is there.
func addMember(doc []byte, keys []string, key string, v any, rec *Record, file string) ([]byte, []string, error) {
	doc, err := ensure(doc, keys, map[string]any{}, rec, file)
	if err != nil {
		return nil, nil, err
	}
	root, _ := parseDoc(doc)
	obj := root.lookup(keys...)
	if obj.kind != '{' {
		return nil, nil, fmt.Errorf("%s is not an object", strings.Join(keys, "."))
	}
	if obj.get(key) != nil {
		return doc, nil, nil
	}
	doc, padded := insertIn(doc, obj, key, v)
	if padded {
		rec.pad(file, keys)
	}
	return doc, []string{fmt.Sprintf("added %s.%s", strings.Join(keys, "."), key)}, nil
}

// addElem adds a string to the list at keys unless it is there.
func addElem(doc []byte, keys []string, s string, rec *Record, file string) ([]byte, []string, error) {
	doc, err := ensure(doc, keys, []any{}, rec, file)
	if err != nil {
		return nil, nil, err
	}
	root, _ := parseDoc(doc)
	list := root.lookup(keys...)
	if list.kind != '[' {
		return nil, nil, fmt.Errorf("%s is not a list", strings.Join(keys, "."))
	}
	for _, e := range list.elems {
		var have string
		if e.kind == '"' && json.Unmarshal(text(doc, e), &have) == nil && have == s {
			return doc, nil, nil
		}
	}
	doc, padded := insertIn(doc, list, "", s)
	if padded {
		rec.pad(file, keys)
	}
	return doc, []string{fmt.Sprintf("added %s %q", strings.Join(keys, "."), s)}, nil
}

// mkdirs makes dir, under top, with the parents it lacks, and records
// the folders it made.
func mkdirs(top, dir string, rec *Record) error {
	var missing []string
	for d := filepath.Clean(dir); d != filepath.Clean(top) && strings.HasPrefix(d, filepath.Clean(top)+string(filepath.Separator)); d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, d := range missing {
		rel, _ := filepath.Rel(top, d)
		rec.createdFile(filepath.ToSlash(rel) + "/")
	}
	return nil
}

// readBounded reads a settings file of at most MaxSettings bytes.
func readBounded(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: left alone", path)
	}
	if fi.Size() > MaxSettings {
		return nil, fmt.Errorf("%s is larger than %d bytes: left alone", path, MaxSettings)
	}
	return os.ReadFile(path)
}

// writeFile replaces path with data (a temporary file renamed), keeping
// the mode of the file it replaces.
func writeFile(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return atomicfile.Write(path, data, mode)
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Remove takes out of the working tree at top what Install put there for
// agent a: the skill file (when it is the one this version writes), the
// MCP server entry, the hooks whose command is git-evolve's and the deny
// rules; the lists, objects, files and folders Install created (rec: what
// it recorded; nil when there is no record: then what the removal leaves
// empty) go too. What the user changed in git-evolve's entries is left,
// and said.
func Remove(top string, a *Agent, skill []byte, rec *Record) ([]Change, error) {
	var out []Change
	c, err := removeSkill(top, a, skill, rec)
	out = append(out, c...)
	if err != nil {
		return out, err
	}
	if a.MCPTOML {
		c, err = removeTOML(top, a, rec)
	} else {
		c, err = uneditJSON(top, a.MCPFile, a.skeleton(a.MCPFile), rec, func(doc []byte) ([]byte, []string, []string, error) {
			root, _ := parseDoc(doc)
			servers := root.get("mcpServers")
			if servers == nil || servers.kind != '{' {
				return doc, nil, nil, nil
			}
			for i, m := range servers.members {
				if m.key != MCPName {
					continue
				}
				ours, _ := json.Marshal(mcpEntry())
				if !sameJSON(text(doc, m.value), ours) {
					return doc, nil, []string{fmt.Sprintf("mcpServers.%s is not as git-evolve wrote it: left as it is", MCPName)}, nil
				}
				doc = removeAt(doc, servers, i, rec.padded(a.MCPFile, []string{"mcpServers"}))
				doc = prune(doc, []string{"mcpServers"}, rec, a.MCPFile)
				return doc, []string{"removed mcpServers." + MCPName}, nil, nil
			}
			return doc, nil, nil, nil
		})
	}
	out = append(out, c...)
	if err != nil {
		return out, err
	}
	c, err = uneditJSON(top, a.HooksFile, a.skeleton(a.HooksFile), rec, func(doc []byte) ([]byte, []string, []string, error) {
		var said []string
		for _, ev := range Events {
			name := a.HookEvent(ev)
			for {
				root, _ := parseDoc(doc)
				list := root.lookup("hooks", name)
				if list == nil || list.kind != '[' {
					break
				}
				found := false
				for _, h := range a.hooksIn(doc, list) {
					if h.command != a.HookCommand(ev) {
						continue
					}
					found = true
					listPad := rec.padded(a.HooksFile, []string{"hooks", name})
					if h.j < 0 {
						doc = removeAt(doc, list, h.i, listPad)
					} else {
						group := list.elems[h.i]
						hs := group.get("hooks")
						if len(hs.elems) == 1 {
							doc = removeAt(doc, list, h.i, listPad)
						} else {
							doc = removeAt(doc, hs, h.j, false)
						}
					}
					said = append(said, fmt.Sprintf("removed the %s hook (%s)", name, h.command))
					break
				}
				if !found {
					break
				}
			}
			doc = prune(doc, []string{"hooks", name}, rec, a.HooksFile)
		}
		for _, rule := range a.Deny {
			root, _ := parseDoc(doc)
			list := root.lookup("permissions", "deny")
			if list == nil || list.kind != '[' {
				break
			}
			for i, e := range list.elems {
				var have string
				if e.kind == '"' && json.Unmarshal(text(doc, e), &have) == nil && have == rule {
					doc = removeAt(doc, list, i, rec.padded(a.HooksFile, []string{"permissions", "deny"}))
					said = append(said, fmt.Sprintf("removed permissions.deny %q", rule))
					break
				}
			}
			doc = prune(doc, []string{"permissions", "deny"}, rec, a.HooksFile)
		}
		return doc, said, nil, nil
	})
	return append(out, c...), err
}

// prune removes the list or object at keys when it is empty and Install
// added it, then its parents when that leaves them empty, up to the top
// object.
func prune(doc []byte, keys []string, rec *Record, file string) []byte {
	for i := len(keys); i > 0; i-- {
		root, err := parseDoc(doc)
		if err != nil {
			return doc
		}
		parent := root.lookup(keys[:i-1]...)
		n := parent.get(keys[i-1])
		if n == nil || len(n.members) > 0 || len(n.elems) > 0 || (n.kind != '{' && n.kind != '[') || !rec.madeContainer(file, keys[:i]) {
			return doc
		}
		for j, m := range parent.members {
			if m.key == keys[i-1] {
				doc = removeAt(doc, parent, j, rec.padded(file, keys[:i-1]))
				break
			}
		}
	}
	return doc
}

func removeSkill(top string, a *Agent, skill []byte, rec *Record) ([]Change, error) {
	rel := a.SkillPath()
	path := filepath.Join(top, rel)
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case !bytes.Contains(old, []byte(skillMarker)):
		return []Change{{Path: rel, Hint: true, Message: rel + " is not git-evolve's: left as it is"}}, nil
	case !bytes.Equal(old, skill):
		return []Change{{Path: rel, Hint: true, Message: rel + " was changed since git-evolve wrote it: left as it is (remove it yourself)"}}, nil
	}
	if err := os.Remove(path); err != nil {
		return nil, err
	}
	removeEmptyDirs(top, filepath.Dir(path), rec)
	return []Change{{Path: rel, Message: "removed the " + SkillName + " skill: " + rel}}, nil
}

func removeTOML(top string, a *Agent, rec *Record) ([]Change, error) {
	path := filepath.Join(top, a.MCPFile)
	old, err := readBounded(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s := string(old)
	var next string
	switch {
	case s == codexMCP && rec.madeFile(a.MCPFile):
		if err := os.Remove(path); err != nil {
			return nil, err
		}
		removeEmptyDirs(top, filepath.Dir(path), rec)
		return []Change{{Path: a.MCPFile, Message: fmt.Sprintf("removed the %s MCP server: %s (nothing else was in it)", MCPName, a.MCPFile)}}, nil
	case s == codexMCP:
		next = ""
	case strings.Contains(s, "\n\n"+codexMCP):
		next = strings.Replace(s, "\n"+codexMCP, "", 1)
	case strings.Contains(s, codexMCP):
		next = strings.Replace(s, codexMCP, "", 1)
	case strings.Contains(s, "[mcp_servers."+MCPName+"]"):
		return []Change{{Path: a.MCPFile, Hint: true, Message: fmt.Sprintf("[mcp_servers.%s] in %s is not as git-evolve wrote it: left as it is", MCPName, a.MCPFile)}}, nil
	default:
		return nil, nil
	}
	if err := writeFile(path, []byte(next)); err != nil {
		return nil, err
	}
	return []Change{{Path: a.MCPFile, Message: fmt.Sprintf("removed the %s MCP server from %s", MCPName, a.MCPFile)}}, nil
}

// uneditJSON is editJSON for a removal: a file left holding nothing but
// its skeleton is removed, with the folders that leaves empty.
func uneditJSON(top, rel string, skeleton ordered, rec *Record, edit func([]byte) ([]byte, []string, []string, error)) ([]Change, error) {
	path := filepath.Join(top, rel)
	doc, err := readBounded(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := parseDoc(doc); err != nil {
		return nil, fmt.Errorf("%s: %w: fix it, then run this again", rel, err)
	}
	doc, said, hints, err := edit(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	var out []Change
	for _, h := range hints {
		out = append(out, Change{Path: rel, Hint: true, Message: h + " in " + rel})
	}
	if len(said) == 0 {
		return out, nil
	}
	if !json.Valid(doc) {
		return out, fmt.Errorf("%s: the edit made invalid JSON (a bug): the file is left as it was", rel)
	}
	empty, _ := json.Marshal(skeleton)
	if skeleton == nil {
		empty = []byte("{}")
	}
	if sameJSON(doc, empty) && rec.madeFile(rel) {
		if err := os.Remove(path); err != nil {
			return out, err
		}
		removeEmptyDirs(top, filepath.Dir(path), rec)
		for _, s := range said {
			out = append(out, Change{Path: rel, Message: s + " from " + rel})
		}
		return append(out, Change{Path: rel, Message: "removed " + rel + ": nothing else was in it"}), nil
	}
	if err := writeFile(path, doc); err != nil {
		return out, err
	}
	for _, s := range said {
		out = append(out, Change{Path: rel, Message: s + " from " + rel})
	}
	return out, nil
}

// removeEmptyDirs removes dir and its parents while they are empty and
// Install made them, up to (not including) top.
func removeEmptyDirs(top, dir string, rec *Record) {
	top = filepath.Clean(top)
	for dir = filepath.Clean(dir); dir != top && strings.HasPrefix(dir, top+string(filepath.Separator)); dir = filepath.Dir(dir) {
		rel, _ := filepath.Rel(top, dir)
		if !rec.madeFile(filepath.ToSlash(rel)+"/") || os.Remove(dir) != nil {
			return
		}
	}
}

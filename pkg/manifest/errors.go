package manifest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Error is one problem in one object: where it is, which object, which field, and why.
type Error struct {
	Source api.Source
	Kind   string // object kind, e.g. "ClusterQueue"; empty when the document has none
	Name   string // "namespace/name" or "name"; empty when unknown
	Field  string // JSON path such as "spec.resourceGroups[0].flavors[1].name"
	Msg    string
}

// Error renders "file:line: Kind name: field: message", leaving out empty parts.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Source.String())
	b.WriteString(": ")
	if e.Kind != "" {
		b.WriteString(e.Kind)
		if e.Name != "" {
			b.WriteString(" " + e.Name)
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem found by Load, ordered by file, line, then message.
type ErrorList []*Error

// Error prints one problem per line.
func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// sorted orders the list deterministically (by file, line, then text).
func (l ErrorList) sorted() ErrorList {
	out := append(ErrorList(nil), l...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Source.File != b.Source.File {
			return a.Source.File < b.Source.File
		}
		if a.Source.Line != b.Source.Line {
			return a.Source.Line < b.Source.Line
		}
		return a.Error() < b.Error()
	})
	return out
}

// errs collects errors for one object, filling in its identity.
type errs struct {
	list *ErrorList
	src  api.Source
	kind string
	name string
	// lines maps a field path to its line in the source, when known.
	lines map[string]int
	// unknownOK: unknown fields are not reported (loader.unknownOK).
	unknownOK bool
}

// add records a problem with field (a JSON path, may be empty).
func (c errs) add(field, format string, args ...any) {
	src := c.src
	if l, ok := c.lineOf(field); ok {
		src.Line = l
	}
	*c.list = append(*c.list, &Error{Source: src, Kind: c.kind, Name: c.name, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// lineOf finds the line of field or, failing that, of its nearest known parent.
func (c errs) lineOf(field string) (int, bool) {
	for p := field; p != ""; p = parentPath(p) {
		if l, ok := c.lines[p]; ok {
			return l, true
		}
	}
	return 0, false
}

// parentPath drops the last segment of a path: "a.b[2]" -> "a.b", "a.b" -> "a".
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// addAt records a problem at a known line.
func (c errs) addAt(line int, field, format string, args ...any) {
	src := c.src
	if line > 0 {
		src.Line = line
	}
	*c.list = append(*c.list, &Error{Source: src, Kind: c.kind, Name: c.name, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// srcOf builds a Source.
func srcOf(file string, line int) api.Source { return api.Source{File: file, Line: line} }

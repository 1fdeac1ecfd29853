package migparted

import (
	"fmt"
	"strings"
)

// Error is a problem in a config file, located: the file and line, then as much of
// config name, entry index and field as applies.
type Error struct {
	File   string
	Line   int
	Config string // "" above the configs
	Entry  int    // -1 when not inside an entry
	Field  string // "" for the whole config or entry
	Reason string
}

func (e *Error) Error() string {
	var where []string
	if e.Config != "" {
		where = append(where, fmt.Sprintf("config %q", e.Config))
	}
	if e.Entry >= 0 {
		where = append(where, fmt.Sprintf("entry %d", e.Entry))
	}
	if e.Field != "" {
		where = append(where, "field "+e.Field)
	}
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if len(where) == 0 {
		return loc + ": " + e.Reason
	}
	return loc + ": " + strings.Join(where, ", ") + ": " + e.Reason
}

// at is where the parser is: it makes located errors.
type at struct {
	file   string
	config string
	entry  int
	field  string
}

func (a at) errorf(line int, format string, args ...any) *Error {
	return &Error{File: a.file, Line: line, Config: a.config, Entry: a.entry, Field: a.field, Reason: fmt.Sprintf(format, args...)}
}

func (a at) inConfig(name string) at { a.config, a.entry, a.field = name, -1, ""; return a }
func (a at) inEntry(i int) at        { a.entry, a.field = i, ""; return a }
func (a at) inField(f string) at     { a.field = f; return a }

package trace

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// TraceError locates one bad value in a trace file: file, 1-based line and column, the
// column's name and why the value was refused.
type TraceError struct {
	File   string
	Line   int
	Column int
	Field  string
	Msg    string
}

func (e *TraceError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: column %q: %s", e.File, e.Line, e.Column, e.Field, e.Msg)
}

// TraceErrors is every problem found in one trace file (up to maxTraceErrors), in file order.
type TraceErrors []*TraceError

// maxTraceErrors bounds the list so a wholly wrong file does not print thousands of lines.
const maxTraceErrors = 20

func (l TraceErrors) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// csvTable reads a CSV file with a header row, gives access to fields by column name and
// records errors with their positions. Importers read rows with next and parse fields with
// the typed getters; a getter that fails records the error and returns a zero value.
type csvTable struct {
	file string
	r    *csv.Reader
	cols map[string]int
	rec  []string
	errs TraceErrors
}

// openCSV reads the header. Every name in required must be present; names outside
// required and optional are refused when strict is set (a typo in a generic trace must
// not silently drop a column).
func openCSV(r io.Reader, file string, required, optional []string, strict bool) (*csvTable, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	t := &csvTable{file: file, r: cr, cols: map[string]int{}}
	header, err := cr.Read()
	if err == io.EOF {
		return nil, TraceErrors{{File: file, Line: 1, Column: 1, Msg: "empty file: want a header row"}}
	}
	if err != nil {
		return nil, t.readError(err)
	}
	known := map[string]bool{}
	for _, c := range append(append([]string{}, required...), optional...) {
		known[c] = true
	}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if _, dup := t.cols[h]; dup {
			t.failAt(1, i, h, "duplicate column")
			continue
		}
		if strict && !known[h] {
			t.failAt(1, i, h, fmt.Sprintf("unknown column; known columns: %s", strings.Join(sortedCopy(known), ", ")))
			continue
		}
		t.cols[h] = i
	}
	for _, c := range required {
		if _, ok := t.cols[c]; !ok {
			t.failAt(1, 0, c, "required column missing from the header")
		}
	}
	if len(t.errs) > 0 {
		return nil, t.errs
	}
	return t, nil
}

// next reads the next record; false at the end of the file or on a malformed record
// (whose error is recorded).
func (t *csvTable) next() bool {
	if len(t.errs) >= maxTraceErrors {
		return false
	}
	rec, err := t.r.Read()
	if err == io.EOF {
		return false
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			t.errs = append(t.errs, &TraceError{File: t.file, Line: pe.Line, Column: pe.Column, Msg: pe.Err.Error()})
		} else {
			t.errs = append(t.errs, &TraceError{File: t.file, Msg: err.Error()})
		}
		return false
	}
	t.rec = rec
	return true
}

// err returns the recorded errors, or nil.
func (t *csvTable) err() error {
	if len(t.errs) == 0 {
		return nil
	}
	return t.errs
}

func (t *csvTable) readError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return TraceErrors{{File: t.file, Line: pe.Line, Column: pe.Column, Msg: pe.Err.Error()}}
	}
	return TraceErrors{{File: t.file, Msg: err.Error()}}
}

// line is the current record's first line.
func (t *csvTable) line() int {
	l, _ := t.r.FieldPos(0)
	return l
}

// has reports whether the header has the column.
func (t *csvTable) has(col string) bool { _, ok := t.cols[col]; return ok }

// str returns the column's trimmed value; "" when the column is absent or the row short.
func (t *csvTable) str(col string) string {
	i, ok := t.cols[col]
	if !ok || i >= len(t.rec) {
		return ""
	}
	return strings.TrimSpace(t.rec[i])
}

// fail records an error at the current record's column.
func (t *csvTable) fail(col, msg string) {
	i, ok := t.cols[col]
	if !ok || i >= len(t.rec) {
		t.errs = append(t.errs, &TraceError{File: t.file, Line: t.line(), Column: 1, Field: col, Msg: msg})
		return
	}
	l, c := t.r.FieldPos(i)
	t.errs = append(t.errs, &TraceError{File: t.file, Line: l, Column: c, Field: col, Msg: msg})
}

func (t *csvTable) failAt(line, idx int, col, msg string) {
	t.errs = append(t.errs, &TraceError{File: t.file, Line: line, Column: idx + 1, Field: col, Msg: msg})
}

// integer parses a whole number in [min, max]; empty is an error unless the caller checks
// str first.
func (t *csvTable) integer(col string, min, max int64) int64 {
	s := t.str(col)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.fail(col, fmt.Sprintf("%q is not a whole number", s))
		return 0
	}
	if v < min || v > max {
		t.fail(col, fmt.Sprintf("%d is out of range [%d, %d]", v, min, max))
		return 0
	}
	return v
}

// seconds parses a non-negative number of seconds written as an integer or a decimal
// ("66", "66.0", "1.5") into an exact duration, without going through floats.
func (t *csvTable) seconds(col string) time.Duration {
	s := t.str(col)
	d, err := parseDecimalSeconds(s)
	if err != nil {
		t.fail(col, err.Error())
		return 0
	}
	return d
}

// parseDecimalSeconds reads "123" or "123.456" (up to nanosecond digits) as a duration.
func parseDecimalSeconds(s string) (time.Duration, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" {
		return 0, fmt.Errorf("%q is not a number of seconds", s)
	}
	w := int64(0)
	if whole != "" {
		v, err := strconv.ParseInt(whole, 10, 64)
		if err != nil || v < 0 || v > int64(time.Duration(1<<62)/time.Second) {
			return 0, fmt.Errorf("%q is not a non-negative number of seconds", s)
		}
		w = v
	}
	ns := int64(0)
	for i, ch := range frac {
		if ch < '0' || ch > '9' {
			return 0, fmt.Errorf("%q is not a non-negative number of seconds", s)
		}
		if i < 9 {
			ns = ns*10 + int64(ch-'0')
		}
	}
	for i := len(frac); i < 9; i++ {
		ns *= 10
	}
	return time.Duration(w)*time.Second + time.Duration(ns), nil
}

func sortedCopy(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

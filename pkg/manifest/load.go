package manifest

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
)

// StdinName is the file name errors use for documents read from stdin ("-").
const StdinName = "<stdin>"

// Load reads every path (a file, a folder searched recursively for *.yaml, *.yml and
// *.json in sorted order, or "-" for stdin), decodes every document strictly, converts
// it into api objects and checks the references between them.
//
// On any problem the error is an ErrorList holding every problem of every file; the
// returned objects are then incomplete (the bad objects are left out) and should only be
// used for diagnostics.
func Load(paths []string, stdin io.Reader) (*api.Objects, error) {
	l := newLoader()
	for _, f := range l.expand(paths) {
		name := f
		if f == "-" {
			name = StdinName
		}
		data, err := l.read(f, stdin)
		if err != nil {
			l.errs = append(l.errs, &Error{Source: srcOf(name, 0), Msg: "cannot read: " + describeFSError(err)})
			continue
		}
		l.file(name, data)
	}
	return l.finish()
}

// LoadBytes loads one in-memory file under the given name (tests, fuzzing, embedding).
func LoadBytes(name string, data []byte) (*api.Objects, error) {
	l := newLoader()
	l.file(name, data)
	return l.finish()
}

// file loads every document of one file.
func (l *loader) file(name string, data []byte) {
	docs, perr := parseDocuments(name, data)
	for _, d := range docs {
		l.document(d)
	}
	if perr != nil {
		l.errs = append(l.errs, perr)
	}
}

// finish resolves references and returns the objects with every problem found.
func (l *loader) finish() (*api.Objects, error) {
	l.resolve()
	if len(l.errs) > 0 {
		return &l.objs, l.errs.sorted()
	}
	return &l.objs, nil
}

// expand turns the user's paths into the list of files to read, in a stable order.
func (l *loader) expand(paths []string) []string {
	var files []string
	for _, p := range paths {
		if p == "-" {
			files = append(files, "-")
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			l.errs = append(l.errs, &Error{Source: srcOf(p, 0), Msg: "cannot read: " + describeFSError(err)})
			continue
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		var found []string
		walkErr := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				l.errs = append(l.errs, &Error{Source: srcOf(path, 0), Msg: "cannot read: " + describeFSError(err)})
				return nil
			}
			if !d.IsDir() && isManifestFile(path) {
				found = append(found, path)
			}
			return nil
		})
		if walkErr != nil {
			l.errs = append(l.errs, &Error{Source: srcOf(p, 0), Msg: "cannot read: " + describeFSError(walkErr)})
		}
		sort.Strings(found)
		if len(found) == 0 {
			l.errs = append(l.errs, &Error{Source: srcOf(p, 0), Msg: "folder holds no *.yaml, *.yml or *.json files"})
		}
		files = append(files, found...)
	}
	return files
}

func isManifestFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func (l *loader) read(f string, stdin io.Reader) ([]byte, error) {
	if f != "-" {
		return os.ReadFile(f)
	}
	if stdin == nil {
		return nil, errNoStdin
	}
	return io.ReadAll(stdin)
}

type loadError string

func (e loadError) Error() string { return string(e) }

const errNoStdin = loadError("\"-\" given but no standard input is available")

func describeFSError(err error) string {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

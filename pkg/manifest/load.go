package manifest

import (
	"io"
	"io/fs"
	"path/filepath"
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
	inputs, problems := ReadInputs(paths, stdin)
	l := newLoader()
	l.errs = append(l.errs, problems...)
	for _, in := range inputs {
		for _, f := range in.Files {
			l.file(f.Name, f.Data)
		}
	}
	l.errs = append(l.errs, EmptyInputs(inputs)...)
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
	l.resolveTrainJobs() // TrainJobs become workloads once their runtimes are read
	l.resolve()
	if len(l.errs) > 0 {
		return &l.objs, l.errs.sorted()
	}
	return &l.objs, nil
}

func isManifestFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
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

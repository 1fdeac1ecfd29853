package manifest

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Input is one path the user gave (-f): a file, a folder read recursively for its
// *.yaml, *.yml and *.json files in sorted order, or "-" for stdin.
type Input struct {
	Path   string
	Folder bool
	Files  []InputFile
}

// InputFile is one file of an input: its name as errors show it (StdinName for
// stdin) and its bytes.
type InputFile struct {
	Name string
	Data []byte
}

// ReadInputs reads every path. What cannot be read is a problem naming the path, and
// the rest is still read, so that one run reports everything.
func ReadInputs(paths []string, stdin io.Reader) ([]Input, ErrorList) {
	var out []Input
	var problems ErrorList
	for _, p := range paths {
		in, errs := readInput(p, stdin)
		problems = append(problems, errs...)
		out = append(out, in)
	}
	return out, problems
}

func readInput(p string, stdin io.Reader) (Input, ErrorList) {
	in := Input{Path: p}
	if p == "-" {
		if stdin == nil {
			return in, ErrorList{readProblem(StdinName, errNoStdin)}
		}
		data, err := io.ReadAll(stdin)
		if err != nil {
			return in, ErrorList{readProblem(StdinName, err)}
		}
		in.Files = []InputFile{{Name: StdinName, Data: data}}
		return in, nil
	}
	info, err := os.Stat(p)
	if err != nil {
		return in, ErrorList{readProblem(p, err)}
	}
	if !info.IsDir() {
		data, err := os.ReadFile(p)
		if err != nil {
			return in, ErrorList{readProblem(p, err)}
		}
		in.Files = []InputFile{{Name: p, Data: data}}
		return in, nil
	}
	in.Folder = true
	return in, in.readFolder()
}

// readFolder reads the manifest files under the folder in.Path.
func (in *Input) readFolder() ErrorList {
	var problems ErrorList
	var names []string
	walkErr := filepath.WalkDir(in.Path, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			problems = append(problems, readProblem(path, err))
			return nil
		}
		if d.IsDir() && path != in.Path && isVariantFolder(path) {
			return filepath.SkipDir
		}
		if !d.IsDir() && isManifestFile(path) {
			names = append(names, path)
		}
		return nil
	})
	if walkErr != nil {
		problems = append(problems, readProblem(in.Path, walkErr))
	}
	sort.Strings(names)
	if len(names) == 0 && len(problems) == 0 {
		problems = append(problems, &Error{Source: srcOf(in.Path, 0), Msg: "folder holds no *.yaml, *.yml or *.json files"})
	}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			problems = append(problems, readProblem(n, err))
			continue
		}
		in.Files = append(in.Files, InputFile{Name: n, Data: data})
	}
	return problems
}

func readProblem(name string, err error) *Error {
	return &Error{Source: srcOf(name, 0), Msg: "cannot read: " + describeFSError(err)}
}

// EmptyInputs names each input that holds no object: a file given with -f (or stdin)
// that is empty or only comments, and a folder whose every file is. An empty file inside
// a folder with objects elsewhere is not reported: folders collect files, and a
// placeholder among them is harmless, whereas a file named on the command line that
// holds nothing is almost always the wrong file.
func EmptyInputs(inputs []Input) ErrorList {
	var problems ErrorList
	for _, in := range inputs {
		if len(in.Files) == 0 || in.hasObjects() {
			continue
		}
		if in.Folder {
			problems = append(problems, &Error{Source: srcOf(in.Path, 0), Msg: "folder holds no objects: every manifest file in it is empty or only comments"})
		} else {
			problems = append(problems, &Error{Source: srcOf(in.Files[0].Name, 0), Msg: "holds no objects: the file is empty or only comments"})
		}
	}
	return problems
}

// hasObjects reports whether any file of the input has a document; one that does not
// parse counts (its own error says why).
func (in Input) hasObjects() bool {
	for _, f := range in.Files {
		if docs, perr := parseDocuments(f.Name, f.Data); len(docs) > 0 || perr != nil {
			return true
		}
	}
	return false
}

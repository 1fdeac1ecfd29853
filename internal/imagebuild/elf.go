package imagebuild

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// object is what the dynamic loader reads from one ELF file to load it.
type object struct {
	class   elf.Class
	machine elf.Machine
	interp  string   // PT_INTERP: the loader of an executable; "" for a library or static binary
	needed  []string // DT_NEEDED
	runpath []string // DT_RUNPATH, else DT_RPATH, with $ORIGIN left for the caller to expand
}

// static reports whether the loader has nothing to do for this file.
func (o object) static() bool { return o.interp == "" && len(o.needed) == 0 }

// readObject reads the loading facts of the ELF file at file.
func readObject(file string) (object, error) {
	r, err := os.Open(file)
	if err != nil {
		return object{}, err
	}
	defer r.Close()
	f, err := elf.NewFile(r)
	if err != nil {
		return object{}, fmt.Errorf("%s: not an ELF file: %w", file, err)
	}
	o := object{class: f.Class, machine: f.Machine}
	if o.interp, err = interpreter(f); err != nil {
		return object{}, fmt.Errorf("%s: PT_INTERP: %w", file, err)
	}
	if o.needed, err = dynStrings(f, elf.DT_NEEDED); err != nil {
		return object{}, fmt.Errorf("%s: DT_NEEDED: %w", file, err)
	}
	if o.runpath, err = runPath(f); err != nil {
		return object{}, fmt.Errorf("%s: run path: %w", file, err)
	}
	return o, nil
}

// interpreter returns the path in PT_INTERP, or "" when the file has none.
func interpreter(f *elf.File) (string, error) {
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		data, err := io.ReadAll(p.Open())
		if err != nil {
			return "", err
		}
		return string(bytes.TrimRight(data, "\x00")), nil
	}
	return "", nil
}

// runPath returns DT_RUNPATH's directories, or DT_RPATH's when there is no DT_RUNPATH
// (the loader ignores DT_RPATH then).
func runPath(f *elf.File) ([]string, error) {
	for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
		values, err := dynStrings(f, tag)
		if err != nil || len(values) > 0 {
			return splitPaths(values), err
		}
	}
	return nil, nil
}

// dynStrings reads a string tag of the dynamic section; a file without one (a static
// binary) has none.
func dynStrings(f *elf.File, tag elf.DynTag) ([]string, error) {
	if f.Section(".dynamic") == nil {
		return nil, nil
	}
	return f.DynString(tag)
}

func splitPaths(values []string) []string {
	var dirs []string
	for _, v := range values {
		for _, d := range strings.Split(v, ":") {
			if d != "" {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// expandOrigin replaces $ORIGIN (the directory of the object, in the image) in a run
// path entry.
func expandOrigin(dir, objectPath string) string {
	origin := path.Dir(objectPath)
	dir = strings.ReplaceAll(dir, "${ORIGIN}", origin)
	return strings.ReplaceAll(dir, "$ORIGIN", origin)
}

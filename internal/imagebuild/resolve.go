package imagebuild

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// File is one file of an image: where it goes and where its bytes come from.
type File struct {
	Path   string // absolute path in the image
	Source string // file on the build machine
}

// Resolver finds the shared libraries a dynamically linked binary needs.
type Resolver struct {
	// Root is the build machine's file system root ("/"); tests point it elsewhere.
	Root string
}

// defaultDirs are the dynamic loader's built-in search directories (Debian's glibc: the
// multiarch directories first), used when no ld.so.cache is in the image, which is the
// case for images built here: a library found in these directories is found by the
// loader inside the image at the same path.
func defaultDirs(m elf.Machine) []string {
	switch m {
	case elf.EM_X86_64:
		return []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}
	case elf.EM_AARCH64:
		return []string{"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}
	}
	return nil
}

// Libraries returns the loader (PT_INTERP) and every library bin needs, transitively,
// plus the extra libraries it loads at run time with dlopen, each with their own needs.
// A library that cannot be found is an error naming the binary, the object that needs it
// and the directories searched.
func (r Resolver) Libraries(bin string, extra []string) ([]File, error) {
	o, err := readObject(bin)
	if err != nil {
		return nil, err
	}
	if o.interp == "" && (len(o.needed) > 0 || len(extra) > 0) {
		return nil, fmt.Errorf("%s: needs shared libraries but names no loader (PT_INTERP)", bin)
	}
	w := walk{r: r, bin: bin, class: o.class, machine: o.machine, seen: map[string]bool{}}
	if o.interp != "" {
		w.add(File{Path: o.interp, Source: r.host(o.interp)})
		if _, err := os.Stat(r.host(o.interp)); err != nil {
			return nil, fmt.Errorf("%s: loader %s (PT_INTERP): %w", bin, o.interp, err)
		}
	}
	if err := w.needs(BinaryPath, o, append(append([]string(nil), o.needed...), extra...)); err != nil {
		return nil, err
	}
	return w.files, nil
}

// walk is one resolution: the libraries found so far, each once.
type walk struct {
	r       Resolver
	bin     string
	class   elf.Class
	machine elf.Machine
	seen    map[string]bool // sonames resolved
	files   []File
}

func (w *walk) add(f File) { w.files = append(w.files, f) }

// needs resolves the sonames the object at imagePath needs, and theirs.
func (w *walk) needs(imagePath string, o object, sonames []string) error {
	for _, soname := range sonames {
		if w.seen[soname] {
			continue
		}
		w.seen[soname] = true
		f, lib, err := w.find(imagePath, o, soname)
		if err != nil {
			return err
		}
		w.add(f)
		if err := w.needs(f.Path, lib, lib.needed); err != nil {
			return err
		}
	}
	return nil
}

// find looks for soname the way the loader does for the object at imagePath: a name
// with a slash is a path; otherwise its run path, then the default directories, taking
// the first file of the binary's class and machine (the loader skips others).
func (w *walk) find(imagePath string, o object, soname string) (File, object, error) {
	dirs := defaultDirs(w.machine)
	if dirs == nil {
		return File{}, object{}, fmt.Errorf("%s: machine %s: no known loader search path", w.bin, w.machine)
	}
	var candidates []string
	if strings.Contains(soname, "/") {
		candidates = []string{soname}
	} else {
		for _, d := range append(originDirs(o.runpath, imagePath), dirs...) {
			candidates = append(candidates, path.Join(d, soname))
		}
	}
	for _, c := range candidates {
		lib, err := readObject(w.r.host(c))
		if errors.Is(err, fs.ErrNotExist) || err == nil && (lib.class != w.class || lib.machine != w.machine) {
			continue
		}
		if err != nil {
			return File{}, object{}, fmt.Errorf("%s: library %s needed by %s: %w", w.bin, soname, imagePath, err)
		}
		return File{Path: c, Source: w.r.host(c)}, lib, nil
	}
	return File{}, object{}, fmt.Errorf("%s: library %s needed by %s: no %s %s file in %s",
		w.bin, soname, imagePath, w.class, w.machine, strings.Join(dirsOf(candidates), ", "))
}

func originDirs(runpath []string, imagePath string) []string {
	dirs := make([]string, len(runpath))
	for i, d := range runpath {
		dirs[i] = expandOrigin(d, imagePath)
	}
	return dirs
}

func dirsOf(paths []string) []string {
	dirs := make([]string, len(paths))
	for i, p := range paths {
		dirs[i] = path.Dir(p)
	}
	return dirs
}

// host is where an image path is found on the build machine.
func (r Resolver) host(imagePath string) string {
	root := r.Root
	if root == "" {
		root = "/"
	}
	return filepath.Join(root, filepath.FromSlash(imagePath))
}

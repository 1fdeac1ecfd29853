package imagebuild

import (
	"debug/elf"
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// BinaryPath is where the binary lives in every image.
const BinaryPath = "/gantry"

// Binary is the build of the program for one platform.
type Binary struct {
	Platform v1.Platform // os and architecture (amd64, arm64)
	Path     string
}

// Spec describes one image.
type Spec struct {
	Binaries   []Binary
	Entrypoint []string
	User       string            // "uid:gid"; "" runs as root
	Static     bool              // refuse a dynamically linked binary
	Dlopened   []string          // sonames the binary loads at run time (dynamic binaries only)
	Labels     map[string]string // config labels (org.opencontainers.image.*)
	Created    time.Time         // every timestamp in the image
	Root       string            // build machine root the libraries come from ("" is "/")
}

// Build builds one image per binary, in the order given.
func Build(s Spec) ([]v1.Image, error) {
	if len(s.Binaries) == 0 {
		return nil, fmt.Errorf("image: no binary given")
	}
	seen := map[string]bool{}
	var out []v1.Image
	for _, b := range s.Binaries {
		key := b.Platform.OS + "/" + b.Platform.Architecture
		if seen[key] {
			return nil, fmt.Errorf("binary %s: platform %s given twice", b.Path, key)
		}
		seen[key] = true
		img, err := buildOne(s, b)
		if err != nil {
			return nil, err
		}
		out = append(out, img)
	}
	return out, nil
}

// buildOne makes the image of one binary: a base layer (accounts, /tmp and, for a
// dynamic binary, its libraries) and a layer holding only the binary, so a new build
// changes only the second.
func buildOne(s Spec, b Binary) (v1.Image, error) {
	o, err := checkBinary(b)
	if err != nil {
		return nil, err
	}
	base := baseEntries()
	switch {
	case o.static() && len(s.Dlopened) > 0:
		return nil, fmt.Errorf("binary %s: statically linked, so it cannot dlopen %v", b.Path, s.Dlopened)
	case !o.static() && s.Static:
		return nil, fmt.Errorf("binary %s: dynamically linked (loader %q, needs %v); this image takes a static binary (CGO_ENABLED=0)",
			b.Path, o.interp, o.needed)
	case !o.static():
		libs, err := Resolver{Root: s.Root}.Libraries(b.Path, s.Dlopened)
		if err != nil {
			return nil, err
		}
		base = append(base, libraryEntries(libs)...)
	}
	baseLayer, err := newLayer(base, s.Created)
	if err != nil {
		return nil, err
	}
	binLayer, err := newLayer([]entry{{path: BinaryPath, mode: 0o755, source: b.Path}}, s.Created)
	if err != nil {
		return nil, err
	}
	return assemble(s, b.Platform, baseLayer, binLayer)
}

// checkBinary reads the binary and refuses one built for another platform.
func checkBinary(b Binary) (object, error) {
	o, err := readObject(b.Path)
	if err != nil {
		return object{}, fmt.Errorf("binary %s: %w", b.Path, err)
	}
	want := machineOf(b.Platform.Architecture)
	if b.Platform.OS != "linux" || want == elf.EM_NONE {
		return object{}, fmt.Errorf("binary %s: platform %s/%s: want linux/amd64 or linux/arm64",
			b.Path, b.Platform.OS, b.Platform.Architecture)
	}
	if o.machine != want {
		return object{}, fmt.Errorf("binary %s: built for %s, not %s", b.Path, o.machine, b.Platform.Architecture)
	}
	return o, nil
}

// machineOf is the ELF machine of an architecture images are built for, EM_NONE for others.
func machineOf(arch string) elf.Machine {
	switch arch {
	case "amd64":
		return elf.EM_X86_64
	case "arm64":
		return elf.EM_AARCH64
	}
	return elf.EM_NONE
}

// assemble stacks the layers on an empty OCI image and writes the config.
func assemble(s Spec, p v1.Platform, layers ...v1.Layer) (v1.Image, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, l := range layers {
		var err error
		img, err = mutate.Append(img, mutate.Addendum{Layer: l, History: v1.History{
			Created: v1.Time{Time: s.Created}, CreatedBy: "hack/image",
		}})
		if err != nil {
			return nil, err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: s.Created}
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config = v1.Config{
		Entrypoint: s.Entrypoint, User: s.User, WorkingDir: "/", Labels: s.Labels,
		Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
	}
	return mutate.ConfigFile(img, cf)
}

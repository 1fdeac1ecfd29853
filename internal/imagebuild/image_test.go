package imagebuild_test

import (
	"bytes"
	"debug/elf"
	"os"
	"path"
	"reflect"
	"testing"

	"github.com/gantry-sched/gantry/internal/imagebuild"
)

func TestControllerImageConfigAndBinary(t *testing.T) {
	bin := staticBinary(t, "amd64")
	ref := "ghcr.io/gantry-sched/gantry:v1.2.3"
	digest, idx := writeAndRead(t, controllerSpec(bin), ref)
	desc, img := onlyImage(t, idx)
	if desc.Digest != digest || desc.Annotations["org.opencontainers.image.ref.name"] != ref {
		t.Errorf("index.json entry %s %v, want %s named %s", desc.Digest, desc.Annotations, digest, ref)
	}
	if desc.MediaType != "application/vnd.oci.image.manifest.v1+json" {
		t.Errorf("media type %s, want an OCI image manifest", desc.MediaType)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" || !cf.Created.Time.Equal(epoch()) {
		t.Errorf("platform %s/%s created %v, want linux/amd64 at %v", cf.OS, cf.Architecture, cf.Created, epoch())
	}
	if cf.Config.User != "65532:65532" || !reflect.DeepEqual(cf.Config.Entrypoint, []string{"/gantry", "controller"}) {
		t.Errorf("user %q entrypoint %q", cf.Config.User, cf.Config.Entrypoint)
	}
	if !reflect.DeepEqual(cf.Config.Labels, controllerSpec(bin).Labels) {
		t.Errorf("labels %v, want %v", cf.Config.Labels, controllerSpec(bin).Labels)
	}
	fs := files(t, img)
	want, _ := os.ReadFile(bin)
	got, ok := fs["/gantry"]
	if !ok || got.hdr.Mode != 0o755 || got.hdr.Uid != 0 || !bytes.Equal(got.data, want) {
		t.Fatalf("/gantry in the layers: present %v, mode %o, same bytes %v; want the binary, 0755, root-owned",
			ok, got.hdr.Mode, bytes.Equal(got.data, want))
	}
	for name := range fs {
		if path.Ext(name) == ".so" || bytes.Contains([]byte(name), []byte(".so.")) {
			t.Errorf("static image holds library %s", name)
		}
	}
	if h := fs["/home/nonroot"].hdr; h == nil || h.Uid != imagebuild.NonRoot {
		t.Errorf("/home/nonroot not owned by %d: %+v", imagebuild.NonRoot, h)
	}
}

func TestNodeAgentImageHoldsEveryNeededLibrary(t *testing.T) {
	bin := cgoBinary(t)
	_, idx := writeAndRead(t, nodeAgentSpec(bin), "ghcr.io/gantry-sched/gantry-node-agent:v1.2.3")
	_, img := onlyImage(t, idx)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "" || !reflect.DeepEqual(cf.Config.Entrypoint, []string{"/gantry", "node-agent"}) {
		t.Errorf("user %q entrypoint %q, want root and /gantry node-agent", cf.Config.User, cf.Config.Entrypoint)
	}
	fs := files(t, img)
	interp := checkClosed(t, fs)
	if interp == "" {
		t.Fatal("the binary names no loader: not a dynamic build")
	}
	for _, lib := range []string{"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0"} {
		if findLib(fs, lib) == "" {
			t.Errorf("%s missing from the image", lib)
		}
	}
}

// checkClosed checks that every ELF file in the image finds each of its DT_NEEDED
// libraries in the loader's default directories inside the image, and that the loader
// the binary names is there; it returns that loader.
func checkClosed(t *testing.T, fs map[string]layerFile) string {
	t.Helper()
	var interp string
	for name, f := range fs {
		ef, err := elf.NewFile(bytes.NewReader(f.data))
		if err != nil {
			continue // not ELF: accounts, directories
		}
		needed, err := ef.ImportedLibraries()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, lib := range needed {
			if findLib(fs, lib) == "" {
				t.Errorf("%s needs %s, which is not in the image", name, lib)
			}
		}
		for _, p := range ef.Progs {
			if p.Type == elf.PT_INTERP && name == "/gantry" {
				b := make([]byte, p.Filesz)
				p.ReadAt(b, 0)
				interp = string(bytes.TrimRight(b, "\x00"))
			}
		}
	}
	if f, ok := fs[interp]; interp != "" && (!ok || f.hdr.Mode&0o111 == 0) {
		t.Errorf("loader %s missing or not executable", interp)
	}
	return interp
}

func findLib(fs map[string]layerFile, soname string) string {
	for _, d := range []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"} {
		if _, ok := fs[path.Join(d, soname)]; ok {
			return path.Join(d, soname)
		}
	}
	return ""
}

func TestBuildsAreReproducible(t *testing.T) {
	bin := cgoBinary(t)
	ref := "ghcr.io/gantry-sched/gantry-node-agent:dev"
	first, _ := writeAndRead(t, nodeAgentSpec(bin), ref)
	second, _ := writeAndRead(t, nodeAgentSpec(bin), ref)
	if first != second {
		t.Errorf("two builds of the same binary: %s and %s", first, second)
	}
	later := nodeAgentSpec(bin)
	later.Created = epoch().Add(1e9)
	if third, _ := writeAndRead(t, later, ref); third == first {
		t.Errorf("a build at another SOURCE_DATE_EPOCH has the same digest %s: timestamps are not in the image", first)
	}
}

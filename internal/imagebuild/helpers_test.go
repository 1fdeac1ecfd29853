package imagebuild_test

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/gantry-sched/gantry/internal/imagebuild"
)

// staticMain prints a fixed line; built with CGO_ENABLED=0 it needs no library.
const staticMain = `package main

import "fmt"

func main() { fmt.Println("static ok") }
`

// cgoMain calls libm at run time (so the linker keeps DT_NEEDED libm.so.6) and
// libc; built with cgo it needs the loader, libc and libm.
const cgoMain = `package main

/*
#cgo LDFLAGS: -lm
#include <math.h>
#include <stdlib.h>
static double root(const char *s) { return cbrt(atof(s)); }
*/
import "C"

import (
	"fmt"
	"os"
)

func main() {
	s := C.CString(fmt.Sprint(len(os.Args) * 27))
	fmt.Printf("cgo ok %.0f\n", float64(C.root(s)))
}
`

// goBuild compiles src into a binary in a temporary directory (the build cache keeps
// repeat builds cheap).
func goBuild(t *testing.T, src string, env ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "prog")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "main.go")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOOS=linux", "GOFLAGS="), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

func staticBinary(t *testing.T, arch string) string {
	return goBuild(t, staticMain, "CGO_ENABLED=0", "GOARCH="+arch)
}

func cgoBinary(t *testing.T) string {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no C compiler for a cgo build:", err)
	}
	return goBuild(t, cgoMain, "CGO_ENABLED=1", "GOARCH=amd64")
}

// epoch is the build time every test image carries.
func epoch() time.Time { return time.Unix(1700000000, 0).UTC() }

func amd64(path string) imagebuild.Binary {
	return imagebuild.Binary{Platform: v1.Platform{OS: "linux", Architecture: "amd64"}, Path: path}
}

// controllerSpec is the controller's image as make image builds it.
func controllerSpec(bin string) imagebuild.Spec {
	return imagebuild.Spec{
		Binaries: []imagebuild.Binary{amd64(bin)}, Entrypoint: []string{"/gantry", "controller"},
		User: "65532:65532", Static: true, Created: epoch(),
		Labels: map[string]string{
			"org.opencontainers.image.source":   "https://github.com/gantry-sched/gantry",
			"org.opencontainers.image.version":  "v1.2.3",
			"org.opencontainers.image.revision": "abc123",
		},
	}
}

// nodeAgentSpec is the node agent's image as make image builds it.
func nodeAgentSpec(bin string) imagebuild.Spec {
	return imagebuild.Spec{
		Binaries: []imagebuild.Binary{amd64(bin)}, Entrypoint: []string{"/gantry", "node-agent"},
		Dlopened: []string{"libdl.so.2", "libpthread.so.0"}, Created: epoch(),
	}
}

// writeAndRead builds the spec, writes its OCI layout and reads the layout back.
func writeAndRead(t *testing.T, s imagebuild.Spec, ref string) (v1.Hash, v1.ImageIndex) {
	t.Helper()
	imgs, err := imagebuild.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "layout")
	digest, err := imagebuild.WriteLayout(dir, ref, imgs)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("reading back %s: %v", dir, err)
	}
	return digest, idx
}

// onlyImage is the single image an index.json lists, with its descriptor.
func onlyImage(t *testing.T, idx v1.ImageIndex) (v1.Descriptor, v1.Image) {
	t.Helper()
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("index.json lists %d entries, want 1", len(m.Manifests))
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return m.Manifests[0], img
}

// layerFile is one file of an image's flattened layers.
type layerFile struct {
	hdr  *tar.Header
	data []byte
}

// files reads every layer of img, later layers overriding earlier ones.
func files(t *testing.T, img v1.Image) map[string]layerFile {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]layerFile{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, err := io.Copy(&buf, tr); err != nil {
				t.Fatal(err)
			}
			out["/"+filepath.Clean(h.Name)] = layerFile{hdr: h, data: buf.Bytes()}
		}
		rc.Close()
	}
	return out
}

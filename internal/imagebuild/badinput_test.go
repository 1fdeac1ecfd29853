package imagebuild_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/gantry-sched/gantry/internal/imagebuild"
)

// TestBadInputNamesFileAndReason: every refusal names the binary (or reference) and why.
func TestBadInputNamesFileAndReason(t *testing.T) {
	static, dynamic, arm := staticBinary(t, "amd64"), cgoBinary(t), staticBinary(t, "arm64")
	notELF := filepath.Join(t.TempDir(), "script")
	os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755)
	for _, tc := range []struct {
		name string
		spec func() imagebuild.Spec
		want []string
	}{
		{"dynamic binary in a static image", func() imagebuild.Spec { return controllerSpec(dynamic) },
			[]string{dynamic, "dynamically linked", "libc.so.6", "CGO_ENABLED=0"}},
		{"binary of another architecture", func() imagebuild.Spec { return controllerSpec(arm) },
			[]string{arm, "built for EM_AARCH64, not amd64"}},
		{"unknown platform", func() imagebuild.Spec {
			s := controllerSpec(static)
			s.Binaries[0].Platform = v1.Platform{OS: "linux", Architecture: "riscv64"}
			return s
		}, []string{static, "linux/riscv64", "want linux/amd64 or linux/arm64"}},
		{"platform twice", func() imagebuild.Spec {
			s := controllerSpec(static)
			s.Binaries = append(s.Binaries, s.Binaries[0])
			return s
		}, []string{static, "linux/amd64 given twice"}},
		{"not an ELF file", func() imagebuild.Spec { return controllerSpec(notELF) },
			[]string{notELF, "not an ELF file"}},
		{"missing binary", func() imagebuild.Spec { return controllerSpec("/nonexistent/gantry") },
			[]string{"/nonexistent/gantry", "no such file"}},
		{"dlopen from a static binary", func() imagebuild.Spec { return nodeAgentSpec(static) },
			[]string{static, "statically linked", "libdl.so.2"}},
		{"library not found", func() imagebuild.Spec {
			s := nodeAgentSpec(dynamic)
			s.Root = rootWithout(t, "libm.so.6")
			return s
		}, []string{dynamic, "library libm.so.6 needed by /gantry", "/lib/x86_64-linux-gnu", "/usr/lib"}},
		{"dlopened library not found", func() imagebuild.Spec {
			s := nodeAgentSpec(dynamic)
			s.Dlopened = []string{"libnothere.so.9"}
			return s
		}, []string{dynamic, "library libnothere.so.9", "no ELFCLASS64 EM_X86_64 file"}},
		{"no binary", func() imagebuild.Spec { return imagebuild.Spec{} }, []string{"no binary"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := imagebuild.Build(tc.spec())
			if err == nil {
				t.Fatal("built; want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// rootWithout is a build-machine root holding the host's loader and x86-64 libraries
// except one.
func rootWithout(t *testing.T, soname string) string {
	root := t.TempDir()
	libs := filepath.Join(root, "lib", "x86_64-linux-gnu")
	os.MkdirAll(libs, 0o755)
	os.MkdirAll(filepath.Join(root, "lib64"), 0o755)
	os.Symlink("/lib64/ld-linux-x86-64.so.2", filepath.Join(root, "lib64", "ld-linux-x86-64.so.2"))
	for _, name := range []string{"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2"} {
		if name != soname {
			os.Symlink(filepath.Join("/lib/x86_64-linux-gnu", name), filepath.Join(libs, name))
		}
	}
	return root
}

func TestWriteLayoutRefusesABadReference(t *testing.T) {
	imgs, err := imagebuild.Build(controllerSpec(staticBinary(t, "amd64")))
	if err != nil {
		t.Fatal(err)
	}
	_, err = imagebuild.WriteLayout(t.TempDir(), "Not A Reference", imgs)
	if err == nil || !strings.Contains(err.Error(), `"Not A Reference"`) {
		t.Fatalf("error %v, want one naming the reference", err)
	}
}

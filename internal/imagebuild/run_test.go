package imagebuild_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestImagesRunInTheirOwnRoot unpacks each image and runs its entrypoint with the image
// as the root directory, so the binary sees nothing of the build machine: a missing
// library or loader fails here as it would in a container.
func TestImagesRunInTheirOwnRoot(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		bin        func(*testing.T) string
	}{
		{"static", "static ok", func(t *testing.T) string { return staticBinary(t, "amd64") }},
		{"cgo", "cgo ok 3", cgoBinary},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := nodeAgentSpec(tc.bin(t))
			spec.Dlopened = nil
			_, idx := writeAndRead(t, spec, "example.com/run:test")
			_, img := onlyImage(t, idx)
			root := t.TempDir()
			for name, f := range files(t, img) {
				p := filepath.Join(root, name)
				if f.hdr.FileInfo().IsDir() {
					if err := os.MkdirAll(p, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, f.data, f.hdr.FileInfo().Mode()); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("/gantry")
			cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
			cmd.Env = []string{}
			out, err := cmd.CombinedOutput()
			if errors.Is(err, syscall.EPERM) {
				t.Skip("chroot not permitted here:", err)
			}
			if err != nil || strings.TrimSpace(string(out)) != tc.want {
				t.Fatalf("running /gantry in the image: %v, output %q, want %q", err, out, tc.want)
			}
		})
	}
}

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSourceDateEpoch(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{"", time.Unix(0, 0).UTC(), false},
		{"1700000000", time.Unix(1700000000, 0).UTC(), false},
		{"-1", time.Time{}, true},
		{"yesterday", time.Time{}, true},
	} {
		got, err := sourceDateEpoch(tc.in)
		if (err != nil) != tc.wantErr || !got.Equal(tc.want) {
			t.Errorf("sourceDateEpoch(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
			t.Errorf("error %q does not name SOURCE_DATE_EPOCH", err)
		}
	}
}

func TestBinaryFlag(t *testing.T) {
	var b binaryFlags
	for _, bad := range []string{"bin/gantry", "linux=bin/gantry", "linux/amd64="} {
		if err := b.Set(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("-binary %q: error %v, want one naming it", bad, err)
		}
	}
	if err := b.Set("linux/arm64=bin/arm/gantry"); err != nil {
		t.Fatal(err)
	}
	if len(b) != 1 || b[0].Platform.Architecture != "arm64" || b[0].Platform.Variant != "v8" || b[0].Path != "bin/arm/gantry" {
		t.Errorf("parsed %+v", b)
	}
}

// TestRunWritesLayoutAndDockerTar runs the command as make image does.
func TestRunWritesLayoutAndDockerTar(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	os.WriteFile(src, []byte("package main\nfunc main() {}\n"), 0o644)
	bin := filepath.Join(dir, "gantry")
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, tar := filepath.Join(dir, "layout"), filepath.Join(dir, "image.tar")
	var stdout bytes.Buffer
	err := run([]string{"-ref", "example.com/gantry:t", "-out", out, "-docker-tar", tar,
		"-binary", "linux/amd64=" + bin, "-static", "-user", "65532:65532"}, &stdout)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), out+": example.com/gantry:t@sha256:") {
		t.Errorf("stdout %q", stdout.String())
	}
	for _, f := range []string{filepath.Join(out, "index.json"), filepath.Join(out, "oci-layout"), tar} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	if err := run([]string{"-out", out}, &stdout); err == nil || !strings.Contains(err.Error(), "-ref") {
		t.Errorf("without -ref: %v", err)
	}
}

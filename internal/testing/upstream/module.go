// Package upstream gives tests the files of upstream projects (Kueue, Kubeflow, KubeRay,
// LeaderWorkerSet, ...) as their Go modules ship them, read unchanged from the module
// cache instead of copied into this repository.
package upstream

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
)

// ModuleDir fetches path@version into the module cache with the go command and returns
// its folder. It runs outside any module (a temporary folder) so that the project's
// go.mod is neither read nor changed; a second run is served from the cache. A download
// that fails fails the test with the go command's output: a check that cannot run is not
// a check that passed.
func ModuleDir(t testing.TB, path, version string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", path+"@"+version)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var out struct{ Dir, Error string }
	if jerr := json.Unmarshal(stdout.Bytes(), &out); err != nil || jerr != nil || out.Error != "" || out.Dir == "" {
		t.Fatalf("go mod download %s@%s: %v %s\nstdout:\n%s\nstderr:\n%s", path, version, err, out.Error, stdout.String(), stderr.String())
	}
	return out.Dir
}

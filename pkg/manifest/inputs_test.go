package manifest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/manifest"
)

// An input that holds no object is a problem naming it; a placeholder inside a folder
// with objects elsewhere is not.
func TestLoadRefusesEmptyInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.yaml", "# nothing here\n---\n")
	write("full/a.yaml", "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: f}\n")
	write("full/placeholder.yaml", "")
	write("hollow/a.yaml", "\n")
	for _, tc := range []struct {
		paths []string
		want  string // "" means no problem
	}{
		{[]string{empty}, "empty.yaml: holds no objects: the file is empty or only comments"},
		{[]string{filepath.Join(dir, "full")}, ""},
		{[]string{filepath.Join(dir, "hollow")}, "hollow: folder holds no objects"},
	} {
		_, err := manifest.Load(tc.paths, nil)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.paths, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want %q", tc.paths, err, tc.want)
		}
	}
}

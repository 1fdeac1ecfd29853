package kubeenv

import (
	"strings"
	"testing"
)

// TestFindBenchBinariesNamesTheFix checks the message a machine without the
// benchmark's binaries gets.
func TestFindBenchBinariesNamesTheFix(t *testing.T) {
	t.Setenv("GANTRY_KUBE_BIN", t.TempDir())
	_, err := FindBenchBinaries()
	if err == nil {
		t.Fatal("FindBenchBinaries found binaries in an empty directory")
	}
	for _, want := range []string{"kube-scheduler is missing", "kwok is missing", "hack/bench-env.sh"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

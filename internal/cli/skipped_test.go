package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// A ConfigMap beside the examples is skipped with one warning line by validate and
// simulate, and refused, naming file, object and field, under --strict.
func TestSkippedKindsWarnOrRefuse(t *testing.T) {
	dir := t.TempDir()
	cm := writeTemp(t, dir, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: code, namespace: team-a}\ndata: {a: b}\n")
	want := "warning: " + cm + ":1: ConfigMap team-a/code: skipped: does not affect scheduling"
	for _, args := range [][]string{{"validate"}, {"simulate", "--until", "1m"}} {
		var out, errOut bytes.Buffer
		base := append(args, "-f", filepath.Join("..", "..", "examples"), "-f", cm)
		if code := Main(base, nil, &out, &errOut); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
		}
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("%v: stderr lacks %q:\n%s", args, want, errOut.String())
		}
		out.Reset()
		errOut.Reset()
		if code := Main(append(base, "--strict"), nil, &out, &errOut); code == 0 ||
			!strings.Contains(errOut.String(), cm+":1: ConfigMap team-a/code: kind: does not affect scheduling") {
			t.Errorf("%v --strict: exit %d, stderr:\n%s", args, code, errOut.String())
		}
	}
}

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/kubeenv"
)

func TestCommandName(t *testing.T) {
	cases := map[string]string{
		"gantry":                        "gantry",
		"/usr/local/bin/gantry":         "gantry",
		"/home/me/bin/kubectl-gantry":   "kubectl gantry",
		"kubectl-gantry.exe":            "kubectl gantry",
		"/usr/local/bin/kubectl-gantry": "kubectl gantry",
	}
	for arg0, want := range cases {
		if got := CommandName(arg0); got != want {
			t.Errorf("CommandName(%q) = %q, want %q", arg0, got, want)
		}
	}
}

// Under the plugin name, usage names the command as typed: "kubectl gantry get ...".
func TestNameAsInvokedChangesUsage(t *testing.T) {
	root := NewRootCommand(nil, &bytes.Buffer{}, &bytes.Buffer{})
	get, _, err := root.Find([]string{"get"})
	if err != nil {
		t.Fatal(err)
	}
	nameAsInvoked(root, "/usr/bin/kubectl-gantry")
	if got := get.UseLine(); !strings.HasPrefix(got, "kubectl gantry get ") {
		t.Errorf("usage %q, want it to start with \"kubectl gantry get \"", got)
	}
	plain := NewRootCommand(nil, &bytes.Buffer{}, &bytes.Buffer{})
	nameAsInvoked(plain, "gantry")
	if got := plain.CommandPath(); got != "gantry" {
		t.Errorf("command path %q, want gantry", got)
	}
}

// kubectlPlugin builds the binary, links it as kubectl-gantry in a folder put first on
// PATH, and returns a runner of `kubectl gantry ARGS...` (its stdout). It skips under
// -short (it builds) and where kubectl is not installed.
func kubectlPlugin(t *testing.T) func(args ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// The kubectl of the test control plane's release, built by `make test-env`.
	kubectl := filepath.Join(kubeenv.BinDir(), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("kubectl: %v (%s)", err, kubeenv.HowToInstall)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "gantry")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/gantry").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.Symlink(bin, filepath.Join(dir, KubectlPluginName)); err != nil {
		t.Fatal(err)
	}
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command(kubectl, append([]string{"gantry"}, args...)...)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("kubectl gantry %v: %v\n%s%s", args, err, out, stderr.String())
		}
		return string(out)
	}
}

// kubectl runs an executable named kubectl-gantry on PATH as `kubectl gantry`: built
// and linked that way, the binary answers through kubectl, with the same output as the
// command run in-process.
func TestKubectlRunsThePlugin(t *testing.T) {
	plugin := kubectlPlugin(t)
	if out := plugin("version"); !strings.HasPrefix(out, "gantry ") {
		t.Errorf("kubectl gantry version: %q", out)
	}
	args := []string{"team-a/llm-finetune", "-f", "../../examples/", "--at", "30m"}
	if got, want := plugin(append([]string{"explain"}, args...)...), mustRun(t, newExplainCommand(), args...); got != want {
		t.Errorf("kubectl gantry explain %v prints\n%s\nin-process\n%s", args, got, want)
	}
	args = []string{"workloads", "-f", "../../examples/", "--at", "65m"}
	if got, want := plugin(append([]string{"get"}, args...)...), mustRun(t, newGetCommand(), args...); got != want {
		t.Errorf("kubectl gantry get %v prints\n%s\nin-process\n%s", args, got, want)
	}
}

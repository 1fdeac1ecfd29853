package cli

import (
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// KubectlPluginName is the name kubectl's plugin mechanism runs the binary under: an
// executable called kubectl-gantry on PATH makes `kubectl gantry ARGS...` run it with
// ARGS. `make build` puts bin/kubectl-gantry next to bin/gantry.
const KubectlPluginName = "kubectl-gantry"

// CommandName is how usage and help name the command, from the program's name
// (os.Args[0]): "kubectl gantry" when run as the kubectl plugin, else "gantry".
func CommandName(arg0 string) string {
	if strings.TrimSuffix(filepath.Base(arg0), ".exe") == KubectlPluginName {
		return "kubectl gantry"
	}
	return "gantry"
}

// nameAsInvoked makes root's usage and help, and every subcommand's, say the command
// the way it was typed: "kubectl gantry get ..." under the plugin name. Cobra's display
// name annotation changes what is printed, not how arguments are parsed.
func nameAsInvoked(root *cobra.Command, arg0 string) {
	name := CommandName(arg0)
	if name == root.Name() {
		return
	}
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = name
}

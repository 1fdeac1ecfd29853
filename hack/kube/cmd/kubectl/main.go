// Command kubectl is the upstream kubectl of the pinned release, so the tests run
// `kubectl gantry ...` through kubectl's own plugin lookup, as an operator would.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
)

func main() {
	os.Exit(cli.Run(cmd.NewDefaultKubectlCommand()))
}

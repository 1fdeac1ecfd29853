// Command kube-controller-manager is the upstream controller manager built from
// the pinned k8s.io/kubernetes module; tests use it for the Job, garbage
// collector and namespace controllers.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}

// Command kube-apiserver is the upstream API server built from the pinned
// k8s.io/kubernetes module, so Gantry's tests run against a real control plane.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}

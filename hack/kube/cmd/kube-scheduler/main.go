// Command kube-scheduler is the upstream scheduler built from the pinned
// k8s.io/kubernetes module, so `make bench-k8s` measures Gantry side by side
// with the default scheduler of the same release.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}

//go:build !cgo

package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// errNodeAgentNeedsCgo is the node agent's answer in a static build: NVML is loaded
// through go-nvml, which needs cgo, so the controller image's binary has no node agent.
var errNodeAgentNeedsCgo = errors.New("node-agent needs a cgo build: this gantry was built with CGO_ENABLED=0 " +
	"(the static controller binary); run the node-agent image, or build with CGO_ENABLED=1")

// newNodeAgentCommand is the node agent's place in a static build: it takes any
// arguments and says why it cannot run.
func newNodeAgentCommand() *cobra.Command {
	return &cobra.Command{
		Use:                "node-agent",
		Short:              "Discover the node's GPUs and serve the kubelet device plugin (needs a cgo build)",
		DisableFlagParsing: true,
		RunE:               func(*cobra.Command, []string) error { return errNodeAgentNeedsCgo },
	}
}

// Package mocknode builds node-agent nodes for tests: a DGX A100 on the mock NVML
// server in a given state, discovered as the agent discovers it:
// MakeNode(t).Strategy(devices.MIGMixed).Layout("all-balanced").NVLinkDown(7).Discover().
//
// It is apart from package testing because it drives pkg/nodeagent and its NVML mock,
// which only the node agent's tests need; in package testing they would be compiled
// into every scheduler package's tests and forbid the node agent internal tests that
// use the shared builders.
package mocknode

import (
	"context"
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml"
	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml/mock"
)

// NodeWrapper is a mock DGX A100 and the sharing the node is configured with.
type NodeWrapper struct {
	t        testing.TB
	srv      *mock.Server
	sharing  devices.Sharing
	strategy devices.MIGStrategy
}

// MakeNode starts a mock DGX A100 (MIG strategy single) that shuts down with the test.
func MakeNode(t testing.TB) *NodeWrapper {
	t.Helper()
	srv := mock.NewDGXA100()
	if r := srv.Init(); r != nvml.SUCCESS {
		t.Fatalf("mock Init: %v", r)
	}
	t.Cleanup(func() { srv.Shutdown() })
	return &NodeWrapper{t: t, srv: srv, strategy: devices.MIGSingle}
}

// Sharing sets the node's configured sharing mode.
func (b *NodeWrapper) Sharing(s devices.Sharing) *NodeWrapper { b.sharing = s; return b }

// Strategy sets the MIG strategy used by Layout and discovery.
func (b *NodeWrapper) Strategy(s devices.MIGStrategy) *NodeWrapper {
	b.strategy, b.sharing.MIGStrategy = s, s
	return b
}

// Layout applies a MIG layout through the node agent's MIG manager, as the agent would
// with no GPU pods running, and fails the test unless it is applied.
func (b *NodeWrapper) Layout(layout string) *NodeWrapper {
	b.t.Helper()
	st, err := nodeagent.NewMIGManager(b.srv, noPods{}, discard{}, b.strategy).Apply(context.Background(), layout)
	if err != nil || st.State != nodeagent.MIGApplied {
		b.t.Fatalf("applying %s: %v %s", layout, err, st.Annotation())
	}
	b.sharing.Mode, b.sharing.MIGStrategy = devices.MIG, b.strategy
	return b
}

// NVLinkDown takes all links of a GPU down.
func (b *NodeWrapper) NVLinkDown(gpu int) *NodeWrapper { b.srv.SetNVLinksDown(gpu); return b }

// Server is the mock NVML server, for tests that act on the node directly.
func (b *NodeWrapper) Server() *mock.Server { return b.srv }

// Configured is the sharing the node is configured with (what Layout applied).
func (b *NodeWrapper) Configured() devices.Sharing { return b.sharing }

// Discover runs discovery and fails the test on error.
func (b *NodeWrapper) Discover() *nodeagent.Discovery {
	b.t.Helper()
	d, err := nodeagent.Discover(b.srv, b.sharing)
	if err != nil {
		b.t.Fatalf("Discover: %v", err)
	}
	return d
}

// Inventory discovers and builds the device-plugin inventory.
func (b *NodeWrapper) Inventory() (*nodeagent.Discovery, *nodeagent.Inventory) {
	b.t.Helper()
	d := b.Discover()
	inv, err := nodeagent.NewInventory(d, b.sharing)
	if err != nil {
		b.t.Fatalf("NewInventory: %v", err)
	}
	return d, inv
}

// noPods says no GPU pods run, so a layout applies at once.
type noPods struct{}

func (noPods) GPUPods(context.Context) (int, error) { return 0, nil }

// discard drops what the MIG manager writes to the Node: the builder only sets up NVML.
type discard struct{}

func (discard) SetLabels(context.Context, map[string]string) error      { return nil }
func (discard) SetMIGStatus(context.Context, nodeagent.MIGStatus) error { return nil }
func (discard) SetUnhealthyDevices(context.Context, []string) error     { return nil }

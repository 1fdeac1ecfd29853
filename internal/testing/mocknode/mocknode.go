// Package mocknode builds node-agent nodes for tests: one of go-nvml's DGX mocks
// (extended by nvmlmock) in a given state, discovered as the agent discovers it:
// MakeNode(t).Strategy(devices.MIGMixed).Layout("all-balanced").NVLinkDown(7).Discover().
//
// It is apart from package testing because it drives pkg/nodeagent and go-nvml, which
// only the node agent's tests need (and which need cgo); in package testing they would
// be compiled into every scheduler package's tests.
package mocknode

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/internal/testing/mocknode/nvmlmock"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migparted"
)

// NodeWrapper is a mock machine and the sharing the node is configured with.
type NodeWrapper struct {
	t       testing.TB
	srv     *nvmlmock.Server
	sharing devices.Sharing
}

// MakeNode starts a mock DGX A100 (MIG strategy single) that shuts down with the test.
func MakeNode(t testing.TB) *NodeWrapper {
	t.Helper()
	return MakeMachine(t, nvmlmock.DGXA100)
}

// MakeMachine starts the named mock machine (nvmlmock.DGXA100, DGXH100, DGXH200,
// DGXB200; MIG strategy single) that shuts down with the test.
func MakeMachine(t testing.TB, machine string) *NodeWrapper {
	t.Helper()
	srv, err := nvmlmock.New(machine)
	if err != nil {
		t.Fatal(err)
	}
	if r := srv.Init(); r != nvml.SUCCESS {
		t.Fatalf("mock Init: %v", r)
	}
	t.Cleanup(func() { srv.Shutdown() })
	return &NodeWrapper{t: t, srv: srv, sharing: devices.Sharing{MIGStrategy: devices.MIGSingle}}
}

// Sharing sets the node's configured sharing mode (keeping the MIG strategy when s has
// none).
func (b *NodeWrapper) Sharing(s devices.Sharing) *NodeWrapper {
	if s.MIGStrategy == "" {
		s.MIGStrategy = b.sharing.MIGStrategy
	}
	b.sharing = s
	return b
}

// Strategy sets the MIG strategy used by discovery.
func (b *NodeWrapper) Strategy(s devices.MIGStrategy) *NodeWrapper {
	b.sharing.MIGStrategy = s
	return b
}

// Layout applies a config of mig-parted's default file ("all-1g.5gb", "all-balanced",
// "all-disabled", ...) to every GPU at once, as the MIG manager would with no GPU pods
// running, and fails the test unless the GPUs read it back. The node is then configured
// for MIG.
func (b *NodeWrapper) Layout(config string) *NodeWrapper {
	b.t.Helper()
	spec, err := migparted.Default()
	if err != nil {
		b.t.Fatalf("mig-parted default config: %v", err)
	}
	if err := nodeagent.ApplyMIGConfig(b.srv, spec, config); err != nil {
		b.t.Fatalf("applying %s: %v", config, err)
	}
	b.sharing.Mode = devices.MIG
	return b
}

// NVLinkDown takes all links of a GPU down.
func (b *NodeWrapper) NVLinkDown(gpu int) *NodeWrapper { b.srv.SetNVLinksDown(gpu); return b }

// Server is the mock machine, for tests that act on the node directly (inject events,
// refuse registrations, require resets).
func (b *NodeWrapper) Server() *nvmlmock.Server { return b.srv }

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

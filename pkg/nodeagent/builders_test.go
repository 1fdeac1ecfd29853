package nodeagent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml"
	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml/mock"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// nodeBuilder builds a mock DGX A100 in a given state, fluently:
// makeNode(t).Strategy(devices.MIGMixed).Layout("all-balanced").NVLinkDown(7).Discover().
type nodeBuilder struct {
	t        testing.TB
	srv      *mock.Server
	sharing  devices.Sharing
	strategy devices.MIGStrategy
}

func makeNode(t testing.TB) *nodeBuilder {
	t.Helper()
	srv := mock.NewDGXA100()
	if r := srv.Init(); r != nvml.SUCCESS {
		t.Fatalf("mock Init: %v", r)
	}
	t.Cleanup(func() { srv.Shutdown() })
	return &nodeBuilder{t: t, srv: srv, strategy: devices.MIGSingle}
}

// Sharing sets the node's configured sharing mode.
func (b *nodeBuilder) Sharing(s devices.Sharing) *nodeBuilder { b.sharing = s; return b }

// Strategy sets the MIG strategy used by Layout and discovery.
func (b *nodeBuilder) Strategy(s devices.MIGStrategy) *nodeBuilder {
	b.strategy, b.sharing.MIGStrategy = s, s
	return b
}

// Layout applies a MIG layout through the MIG manager and fails the test unless applied.
func (b *nodeBuilder) Layout(layout string) *nodeBuilder {
	b.t.Helper()
	st, err := nodeagent.NewMIGManager(b.srv, podCount(0), &fakeNode{}, b.strategy).Apply(context.Background(), layout)
	if err != nil || st.State != nodeagent.MIGApplied {
		b.t.Fatalf("applying %s: %v %s", layout, err, st.Annotation())
	}
	b.sharing.Mode, b.sharing.MIGStrategy = devices.MIG, b.strategy
	return b
}

// NVLinkDown takes all links of a GPU down.
func (b *nodeBuilder) NVLinkDown(gpu int) *nodeBuilder { b.srv.SetNVLinksDown(gpu); return b }

// Discover runs discovery and fails the test on error.
func (b *nodeBuilder) Discover() *nodeagent.Discovery {
	b.t.Helper()
	d, err := nodeagent.Discover(b.srv, b.sharing)
	if err != nil {
		b.t.Fatalf("Discover: %v", err)
	}
	return d
}

// Inventory discovers and builds the device-plugin inventory.
func (b *nodeBuilder) Inventory() (*nodeagent.Discovery, *nodeagent.Inventory) {
	b.t.Helper()
	d := b.Discover()
	inv, err := nodeagent.NewInventory(d, b.sharing)
	if err != nil {
		b.t.Fatalf("NewInventory: %v", err)
	}
	return d, inv
}

// podCount is a GPUPodCounter with a fixed answer.
type podCount int

func (p podCount) GPUPods(context.Context) (int, error) { return int(p), nil }

// fakeNode records what the agent writes to the Node.
type fakeNode struct {
	mu        sync.Mutex
	labels    map[string]string
	statuses  []nodeagent.MIGStatus
	unhealthy []string
}

func (f *fakeNode) SetLabels(_ context.Context, l map[string]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.labels == nil {
		f.labels = map[string]string{}
	}
	for k, v := range l {
		f.labels[k] = v
	}
	return nil
}

func (f *fakeNode) SetMIGStatus(_ context.Context, s nodeagent.MIGStatus) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses = append(f.statuses, s)
	return nil
}

func (f *fakeNode) SetUnhealthyDevices(_ context.Context, ids []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unhealthy = append([]string(nil), ids...)
	return nil
}

// fakePods is a PodLookup that always answers with one pod.
type fakePods struct{ pod nodeagent.Pod }

func (f fakePods) PodForAllocate(context.Context, resources.Name, []string) (nodeagent.Pod, bool, error) {
	return f.pod, f.pod.Name != "", nil
}

package nodeagent_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSchedulerReadsWhatTheAgentWrites: a Node carrying the agent's labels and the
// device plugin's capacity is read by pkg/cluster into the same advertised devices, so
// scheduler and node agree on what the node offers, device ID for device ID.
func TestSchedulerReadsWhatTheAgentWrites(t *testing.T) {
	perResource := func(mode devices.SharingMode, r devices.ReplicatedResource) func(*mocknode.NodeWrapper) *mocknode.NodeWrapper {
		return func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper {
			return b.Sharing(devices.Sharing{Mode: mode, Resources: []devices.ReplicatedResource{r}})
		}
	}
	timeSlicedMIG := func(rename bool, r devices.ReplicatedResource) func(*mocknode.NodeWrapper) *mocknode.NodeWrapper {
		return func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper {
			return b.Strategy(devices.MIGMixed).Layout("all-balanced").Sharing(devices.Sharing{Mode: devices.TimeSlicing,
				MIGStrategy: devices.MIGMixed, RenameByDefault: rename, Resources: []devices.ReplicatedResource{r}})
		}
	}
	tests := []struct {
		name string
		node func(*mocknode.NodeWrapper) *mocknode.NodeWrapper
		// layout is the nvidia.com/mig.config label the MIG manager sets ("" for none).
		layout string
		// otherPlugin: the node has the labels and counts but not the agent's
		// annotation (NVIDIA's device plugin wrote them): which devices a per-resource
		// list selects is unknown, so only the counts are compared, and a warning is due.
		otherPlugin bool
	}{
		{"exclusive", func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper { return b }, "", false},
		{"time-slicing x4", func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper {
			return b.Sharing(devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4})
		}, "", false},
		{"MIG single all-1g.5gb", func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper { return b.Layout("all-1g.5gb") }, "all-1g.5gb", false},
		{"MIG mixed all-balanced", func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper {
			return b.Strategy(devices.MIGMixed).Layout("all-balanced")
		}, "all-balanced", false},
		{"per-resource: first three GPUs x4", perResource(devices.TimeSlicing,
			devices.ReplicatedResource{Name: resources.NvidiaGPU, Replicas: 4, DeviceCount: 3}), "", false},
		{"per-resource MPS: first two GPUs x2 renamed", perResource(devices.MPS,
			devices.ReplicatedResource{Name: resources.NvidiaGPU, Rename: resources.NvidiaGPUShared, Replicas: 2, DeviceCount: 2}), "", false},
		{"per-resource: GPUs 1 and 6 x2 renamed", perResource(devices.TimeSlicing,
			devices.ReplicatedResource{Name: resources.NvidiaGPU, Rename: resources.NvidiaGPUShared, Replicas: 2, Devices: []string{"1", "6"}}), "", false},
		{"per-resource: GPUs 1 and 6 x2, NVIDIA's plugin", perResource(devices.TimeSlicing,
			devices.ReplicatedResource{Name: resources.NvidiaGPU, Replicas: 2, Devices: []string{"1", "6"}}), "", true},
		{"time-sliced MIG, 1g.5gb devices 0:1 and 3:0 x3", timeSlicedMIG(false,
			devices.ReplicatedResource{Name: "nvidia.com/mig-1g.5gb", Replicas: 3, Devices: []string{"0:1", "3:0"}}), "all-balanced", false},
		{"time-sliced MIG 1g.5gb x3", timeSlicedMIG(false, devices.ReplicatedResource{Name: "nvidia.com/mig-1g.5gb", Replicas: 3}), "all-balanced", false},
		{"time-sliced MIG renamed by default", timeSlicedMIG(true, devices.ReplicatedResource{Name: "nvidia.com/mig-1g.5gb", Replicas: 2}), "all-balanced", false},
		{"time-sliced MIG single all-1g.5gb x2", func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper {
			return b.Layout("all-1g.5gb").Sharing(devices.Sharing{Mode: devices.TimeSlicing,
				Resources: []devices.ReplicatedResource{{Name: resources.NvidiaGPU, Replicas: 2}}})
		}, "all-1g.5gb", false},
		{"time-sliced MIG, first five 2g.10gb x2", timeSlicedMIG(false, devices.ReplicatedResource{Name: "nvidia.com/mig-2g.10gb", Replicas: 2, DeviceCount: 5}), "all-balanced", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.node(mocknode.MakeNode(t))
			d, inv := b.Inventory()
			labels := nodeagent.Labels(d, b.Configured())
			if tc.layout != "" {
				labels[migprotocol.LabelConfig] = tc.layout
			}
			capacity := corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("128"),
				corev1.ResourceMemory: resource.MustParse("1Ti"),
				corev1.ResourcePods:   resource.MustParse("110"),
			}
			want := resources.Vector{}
			for _, r := range inv.Resources() {
				n := int64(len(inv.Devices(r)))
				capacity[corev1.ResourceName(r)] = *resource.NewQuantity(n, resource.DecimalSI)
				want[r] = resources.Amount(n)
			}
			annotations := map[string]string{}
			if r := inv.ReplicatedDevices(); len(r) > 0 && !tc.otherPlugin {
				annotations[devices.AnnotationReplicatedDevices] = r.String()
			}
			kn := corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "dgx-1", Labels: labels, Annotations: annotations},
				Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity,
					Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
			}
			n, err := cluster.NodeFromKube(api.Node{Object: kn})
			if err != nil {
				t.Fatalf("pkg/cluster refuses the agent's node: %v", err)
			}
			if n.Devices == nil {
				t.Fatal("pkg/cluster sees no GPUs")
			}
			got := resources.Vector{}
			for name, a := range n.Devices.Capacity() {
				if _, mig := name.MIGProfile(); mig || name == resources.NvidiaGPU || name == resources.NvidiaGPUShared {
					got[name] = a
				}
			}
			if got.String() != want.String() {
				t.Errorf("pkg/cluster reads %s, the agent advertises %s", got, want)
			}
			if n.GPUCount() != 8 {
				t.Errorf("pkg/cluster counts %d GPUs, want 8", n.GPUCount())
			}
			// Same instances at the same slots and the same NVLink domains, so the
			// device IDs the scheduler annotates are the IDs the plugin advertises.
			for i, g := range n.Devices.GPUs() {
				if fmt.Sprint(g.Instances) != fmt.Sprint(d.GPUs[i].Instances) || g.NVLinkDomain != d.GPUs[i].NVLinkDomain {
					t.Errorf("GPU %d: pkg/cluster has %v in domain %d, the node %v in domain %d", i, g.Instances, g.NVLinkDomain, d.GPUs[i].Instances, d.GPUs[i].NVLinkDomain)
				}
			}
			if tc.otherPlugin && len(n.Warnings) == 0 {
				t.Error("no warning that the replicated devices are assumed")
			}
			if !tc.otherPlugin {
				for _, r := range inv.Resources() {
					if got, want := schedulerIDs(t, n.Devices, r), agentIDs(inv, r); got != want {
						t.Errorf("%s: pkg/cluster has devices %s, the agent advertises %s", r, got, want)
					}
				}
			}
			for _, w := range n.Warnings {
				t.Logf("pkg/cluster warning: %s", w)
			}
		})
	}
}

// schedulerIDs holds every device of resource r on a copy of nd and lists their IDs,
// sorted.
func schedulerIDs(t *testing.T, nd *devices.NodeDevices, r resources.Name) string {
	t.Helper()
	c := nd.Clone()
	req, err := devices.ParseRequest(resources.Vector{r: c.Capacity()[r]})
	if err != nil {
		t.Fatal(err)
	}
	req.PerContainer = 1
	a, refusal := c.Fit(req)
	if refusal != nil {
		return "refused: " + refusal.String()
	}
	return fmt.Sprint(slices.Sorted(slices.Values(a.IDs())))
}

// agentIDs lists the IDs the agent advertises under r, sorted.
func agentIDs(inv *nodeagent.Inventory, r resources.Name) string {
	var ids []string
	for _, d := range inv.Devices(r) {
		ids = append(ids, d.ID)
	}
	return fmt.Sprint(slices.Sorted(slices.Values(ids)))
}

package nodeagent_test

import (
	"fmt"
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
// scheduler and node agree on what the node offers.
func TestSchedulerReadsWhatTheAgentWrites(t *testing.T) {
	tests := []struct {
		name string
		node func(*mocknode.NodeWrapper) *mocknode.NodeWrapper
		// layout is the nvidia.com/mig.config label the MIG manager sets ("" for none).
		layout string
	}{
		{"exclusive", func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper { return b }, ""},
		{"time-slicing x4", func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper {
			return b.Sharing(devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4})
		}, ""},
		{"MIG single all-1g.5gb", func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper { return b.Layout("all-1g.5gb") }, "all-1g.5gb"},
		{"MIG mixed all-balanced", func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper {
			return b.Strategy(devices.MIGMixed).Layout("all-balanced")
		}, "all-balanced"},
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
			kn := corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "dgx-1", Labels: labels},
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
			for _, w := range n.Warnings {
				t.Logf("pkg/cluster warning: %s", w)
			}
		})
	}
}

package cluster_test

import (
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func kubeNode(labels map[string]string, alloc map[string]string) api.Node {
	rl := corev1.ResourceList{}
	for k, v := range alloc {
		rl[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return api.Node{Object: corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Labels: labels},
		Status:     corev1.NodeStatus{Allocatable: rl},
	}}
}

// NodeFromKube: each case gives GFD labels and advertised allocatable; want fields say
// what the node must end up with.
func TestNodeFromKube(t *testing.T) {
	cases := []struct {
		name       string
		labels     map[string]string
		alloc      map[string]string
		wantGPU    int64  // nvidia.com/gpu in device capacity
		wantMIG    int64  // nvidia.com/mig-1g.10gb in device capacity
		wantShared int64  // nvidia.com/gpu.shared in device capacity
		wantWarn   string // substring of the first warning ("" = none)
		wantErr    string // substring of the error ("" = none)
		wantSpot   bool
	}{
		{name: "exclusive", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3", devices.LabelGPUCount: "8"},
			alloc: map[string]string{"cpu": "96", "memory": "1Ti", "pods": "110", "nvidia.com/gpu": "8"}, wantGPU: 8},
		{name: "capacity wins over count label", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3", devices.LabelGPUCount: "8"},
			alloc: map[string]string{"cpu": "96", "nvidia.com/gpu": "7"}, wantGPU: 7, wantWarn: "says 8 GPUs"},
		{name: "mig mixed", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3", devices.LabelGPUCount: "2",
			devices.LabelMIGConfig: "all-1g.10gb", devices.LabelMIGStrategy: "mixed", devices.LabelMIGCapable: "true"},
			alloc: map[string]string{"cpu": "96", "nvidia.com/mig-1g.10gb": "14"}, wantMIG: 14},
		{name: "time-slicing renamed", labels: map[string]string{devices.LabelGPUProduct: "Tesla-T4-SHARED", devices.LabelGPUCount: "2",
			devices.LabelSharingStrategy: "time-slicing", devices.LabelGPUReplicas: "4"},
			alloc: map[string]string{"cpu": "8", "nvidia.com/gpu.shared": "8"}, wantShared: 8},
		{name: "mig single", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", devices.LabelGPUCount: "1",
			devices.LabelMIGConfig: "all-1g.10gb", devices.LabelMIGStrategy: "single", devices.LabelMIGCapable: "true"},
			alloc: map[string]string{"cpu": "8", "nvidia.com/gpu": "7"}, wantGPU: 7},
		{name: "custom mig config rebuilt from capacity", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3", devices.LabelGPUCount: "1",
			devices.LabelMIGConfig: "my-layout", devices.LabelMIGStrategy: "mixed"},
			alloc: map[string]string{"cpu": "8", "nvidia.com/mig-1g.10gb": "3", "nvidia.com/mig-4g.40gb": "1"}, wantMIG: 3, wantWarn: "does not match"},
		{name: "no device plugin", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3", devices.LabelGPUCount: "8"},
			alloc: map[string]string{"cpu": "8"}, wantWarn: "advertises none"},
		{name: "openb node (alibaba labels)", labels: map[string]string{cluster.LabelAlibabaGPUModel: "G2"},
			alloc: map[string]string{"cpu": "64", cluster.ResourceAlibabaGPUCount: "4", cluster.ResourceAlibabaGPUMilli: "4000"}, wantGPU: 4},
		{name: "karpenter spot", labels: map[string]string{cluster.LabelKarpenterCapacityType: "spot"},
			alloc: map[string]string{"cpu": "8"}, wantSpot: true},
		{name: "unknown model", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-Banana-1"},
			alloc: map[string]string{"nvidia.com/gpu": "1"}, wantErr: `node "gpu-1" (<generated>): metadata.labels[nvidia.com/gpu.product]`},
		{name: "gpus without product", labels: map[string]string{},
			alloc: map[string]string{"nvidia.com/gpu": "1"}, wantErr: "cannot tell the GPU model"},
		{name: "bad capacity type", labels: map[string]string{api.LabelCapacityType: "cheap"},
			alloc: map[string]string{"cpu": "1"}, wantErr: "unknown capacity type"},
		// Label values a newer GPU Operator might write are refused, not read as defaults.
		{name: "unknown MIG strategy", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3", devices.LabelMIGStrategy: "hybrid"},
			alloc: map[string]string{"nvidia.com/gpu": "8"}, wantErr: `metadata.labels[nvidia.com/mig.strategy]: unknown value "hybrid" (from a newer GPU Operator?): Gantry knows none, single, mixed`},
		{name: "unknown sharing strategy", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3", devices.LabelSharingStrategy: "vgpu"},
			alloc: map[string]string{"nvidia.com/gpu": "8"}, wantErr: `metadata.labels[nvidia.com/gpu.sharing-strategy]: unknown value "vgpu"`},
		{name: "replicas not a number", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3", devices.LabelGPUReplicas: "four"},
			alloc: map[string]string{"nvidia.com/gpu": "8"}, wantErr: `metadata.labels[nvidia.com/gpu.replicas]: "four": want a whole number`},
		{name: "known values pass", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3", devices.LabelMIGStrategy: "none", devices.LabelSharingStrategy: "none", devices.LabelMIGCapable: "true"},
			alloc: map[string]string{"nvidia.com/gpu": "8"}, wantGPU: 8},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := cluster.NodeFromKube(kubeNode(tc.labels, tc.alloc))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var capa resources.Vector
			if n.Devices != nil {
				capa = n.Devices.Capacity()
			}
			if int64(capa[resources.NvidiaGPU]) != tc.wantGPU || int64(capa[resources.MIGResource("1g.10gb")]) != tc.wantMIG ||
				int64(capa[resources.NvidiaGPUShared]) != tc.wantShared {
				t.Fatalf("device capacity = %s", capa)
			}
			if (n.CapacityType == api.CapacitySpot) != tc.wantSpot {
				t.Fatalf("capacity type = %s", n.CapacityType)
			}
			if tc.wantWarn == "" && len(n.Warnings) > 0 || tc.wantWarn != "" && (len(n.Warnings) == 0 || !strings.Contains(n.Warnings[0].String(), tc.wantWarn)) {
				t.Fatalf("warnings = %v, want %q", n.Warnings, tc.wantWarn)
			}
		})
	}
}

func TestExpandPool(t *testing.T) {
	nodes, err := cluster.ExpandPool(api.NodePool{Meta: api.Meta{Name: "h100"}, Count: 8, GPUModel: "H100", GPUsPerNode: 8,
		CPU: 96000, Memory: 1 << 40, GPUsPerNVLinkDomain: 4,
		Topology: []api.TopologyLevelSpec{{Key: "rack", NodesPerDomain: 4, Prefix: "r"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 8 || nodes[5].Name != "h100-5" || nodes[5].Labels["rack"] != "r1" || nodes[5].Labels[cluster.LabelHostname] != "h100-5" {
		t.Fatalf("nodes[5] = %+v", nodes[5])
	}
	if got := nodes[0].NVLinkDomains(); len(got) != 2 || len(got[1]) != 4 {
		t.Fatalf("NVLink domains = %v", got)
	}
	if _, err := cluster.ExpandPool(api.NodePool{Meta: api.Meta{Name: "bad"}, Count: 1, GPUsPerNode: 2}); err == nil || !strings.Contains(err.Error(), `NodePool "bad"`) {
		t.Fatalf("err = %v", err)
	}
}

// Assume / Undo / Apply: an undone overlay equals its base, a materialised snapshot keeps
// the pod, and the base never changes.
func TestOverlayUndoAndApply(t *testing.T) {
	s, err := cluster.NewSnapshot([]cluster.Node{gt.MakeNode("n1").GPUs("H100", 8).Obj()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ov := s.Overlay()
	d := ov.Devices(0)
	r, _ := devices.ParseRequest(gt.Req("nvidia.com/gpu", "4"))
	a, ref := d.Fit(r)
	if ref != nil {
		t.Fatal(ref)
	}
	m := ov.Mark()
	pod := cluster.PodRef{Workload: "ns/w", PodSet: "main", Index: 0}
	if err := ov.Assume(pod, "n1", gt.Req("cpu", "4", "nvidia.com/gpu", "4"), a); err != nil {
		t.Fatal(err)
	}
	if err := ov.Assume(cluster.PodRef{Workload: "ns/x", PodSet: "main"}, "n1", gt.Req("nvidia.com/gpu", "4"), a); err == nil {
		t.Fatal("the same devices were assumed twice")
	}
	next := ov.Snapshot()
	ov.Undo(m)
	if got := ov.Devices(0).Free()[resources.NvidiaGPU]; got != 8 {
		t.Fatalf("after undo %d GPUs free, want 8", got)
	}
	if got := s.Devices(0).Free()[resources.NvidiaGPU]; got != 8 {
		t.Fatalf("base changed: %d GPUs free", got)
	}
	if _, ok := next.Pod(pod); !ok || next.Devices(0).Free()[resources.NvidiaGPU] != 4 || next.Free(0)[resources.CPU] != 60000 {
		t.Fatalf("materialised snapshot lost the pod")
	}
	back, err := next.Apply([]cluster.Change{{Op: cluster.OpRemove, Pod: cluster.BoundPod{Ref: pod}}})
	if err != nil || back.Devices(0).Free()[resources.NvidiaGPU] != 8 {
		t.Fatalf("remove: %v", err)
	}
}

func TestTopologyDomains(t *testing.T) {
	nodes := []cluster.Node{
		gt.MakeNode("a").Label("block", "b1").Label("rack", "r1").Obj(),
		gt.MakeNode("b").Label("block", "b2").Label("rack", "r1").Obj(),
		gt.MakeNode("c").Label("block", "b2").Label("rack", "r1").Obj(),
		gt.MakeNode("d").Obj(),
	}
	s, err := cluster.NewSnapshot(nodes, []api.Topology{{Meta: api.Meta{Name: "t"}, Levels: []string{"block", "rack"}}})
	if err != nil {
		t.Fatal(err)
	}
	ds := s.Domains("rack")
	if len(ds) != 2 || ds[0].ID != "b1/r1" || ds[1].ID != "b2/r1" || len(ds[1].Nodes) != 2 {
		t.Fatalf("rack domains = %+v", ds)
	}
	if got := len(s.Domains(cluster.LabelHostname)); got != 4 {
		t.Fatalf("hostname domains = %d, want 4", got)
	}
	if _, err := cluster.NewSnapshot(nodes, []api.Topology{{Meta: api.Meta{Name: "t"}, Levels: []string{"rack", "rack"}}}); err == nil {
		t.Fatal("duplicate level accepted")
	}
}

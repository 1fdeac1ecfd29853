package manifest

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

const poolYAML = `apiVersion: gantry.dev/v1alpha1
kind: NodePool
metadata: {name: mig}
spec:
  count: 2
  cpu: "64"
  memory: 512Gi
  maxPods: 64
  extraResources: {rdma/ib: "4"}
  capacityType: spot
  taints: [{key: spot, value: "true", effect: NoSchedule}]
  topology: [{key: topology.gantry.dev/rack, nodesPerDomain: 2, prefix: r-}]
  gpu:
    model: NVIDIA-A100-SXM4-80GB
    perNode: 4
    nvlinkDomainSize: 2
    sharing: {mode: mig, migStrategy: mixed, layout: custom, customProfiles: [[3g.40gb, 4g.40gb]]}
`

func TestNodePoolAndEventConversion(t *testing.T) {
	event := `apiVersion: gantry.dev/v1alpha1
kind: ClusterEvent
metadata: {name: relayout}
spec:
  type: MIGRelayout
  at: 1h
  nodes: [mig-1]
  reconfigureTime: 5m
  sharing: {mode: time-slicing, replicas: 4}
`
	objs, err := LoadBytes("in.yaml", []byte(docs(poolYAML, event)))
	if err != nil {
		t.Fatal(err)
	}
	p := objs.NodePools[0]
	if p.Count != 2 || p.CPU != 64000 || p.Memory != 512<<30 || p.MaxPods != 64 || p.Extra["rdma/ib"] != 4 || p.CapacityType != api.CapacitySpot {
		t.Errorf("pool = %+v", p)
	}
	if p.GPUModel != "NVIDIA-A100-SXM4-80GB" || p.GPUsPerNode != 4 || p.GPUsPerNVLinkDomain != 2 || p.Sharing.Mode != devices.MIG ||
		len(p.Sharing.CustomProfiles) != 1 || p.Topology[0] != (api.TopologyLevelSpec{Key: "topology.gantry.dev/rack", NodesPerDomain: 2, Prefix: "r-"}) {
		t.Errorf("pool gpu/topology = %+v", p)
	}
	e := objs.Events[0]
	if e.Type != api.EventMIGRelayout || e.At != time.Hour || e.ReconfigureTime != 5*time.Minute || e.Sharing == nil || e.Sharing.Replicas != 4 {
		t.Errorf("event = %+v", e)
	}
}

func TestNodeAndEventErrors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		// wantErrors are the full error lines expected, in order.
		wantErrors []string
	}{
		{
			name:  "event names a missing pool and node",
			input: docs(poolYAML, "apiVersion: gantry.dev/v1alpha1\nkind: ClusterEvent\nmetadata: {name: e}\nspec:\n  type: NodeFail\n  at: 5m\n  pool: gone\n  nodes: [mig-7]\n"),
			wantErrors: []string{
				`in.yaml:25: ClusterEvent e: spec.pool: node pool "gone" not found (no NodePool and no node labelled gantry.dev/node-pool=gone)`,
				`in.yaml:26: ClusterEvent e: spec.nodes[0]: node "mig-7" not found`,
			},
		},
		{
			name:  "event with unknown type and bad duration",
			input: "apiVersion: gantry.dev/v1alpha1\nkind: ClusterEvent\nmetadata: {name: e}\nspec:\n  type: Meteor\n  at: later\n",
			wantErrors: []string{
				`in.yaml:5: ClusterEvent e: spec.type: unknown event type "Meteor": want NodeAdd, NodeRemove, NodeFail, NodeRecover, SpotInterruption, SpotReturn, MIGRelayout or QuotaChange`,
				`in.yaml:6: ClusterEvent e: spec.at: invalid duration "later": want e.g. "90s", "2h", "1h30m" or "2d"`,
			},
		},
		{
			name:  "pool with unknown GPU model and bad memory",
			input: "apiVersion: gantry.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  count: 1\n  cpu: \"8\"\n  memory: lots\n  gpu: {model: Z9000, perNode: 1}\n",
			wantErrors: []string{
				`in.yaml:7: NodePool p: spec.memory: cannot parse quantity "lots": expected a Kubernetes quantity such as "500m", "64Gi" or "2"`,
				`in.yaml:8: NodePool p: spec.gpu.model: unknown GPU model "Z9000"`,
			},
		},
		{
			name:       "node whose GPU labels name an unknown product",
			input:      "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels: {nvidia.com/gpu.product: Z9000}\nstatus:\n  allocatable: {nvidia.com/gpu: \"8\", cpu: \"8\"}\n",
			wantErrors: []string{`in.yaml:5: Node n: metadata.labels[nvidia.com/gpu.product]: unknown GPU model "Z9000"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := loadErrors(t, tt.input)
			if len(list) != len(tt.wantErrors) {
				t.Fatalf("got %d problems, want %d:\n%v", len(list), len(tt.wantErrors), list)
			}
			for i, want := range tt.wantErrors {
				if got := list[i].Error(); !strings.HasPrefix(got, want) {
					t.Errorf("problem %d:\n got %s\nwant %s...", i, got, want)
				}
			}
		})
	}
}

// Quantities keep their canonical units end to end: no float on the way.
func TestQuantityUnits(t *testing.T) {
	objs, err := LoadBytes("in.yaml", []byte(docs(queueSetup(), k8s.MakeJob("ns", "j").KueueQueue("q").Request("cpu", "0.5").Request("memory", "1.5Gi").Limit("nvidia.com/gpu", "1").YAML())))
	if err != nil {
		t.Fatal(err)
	}
	req := objs.Workloads[0].PodSets[0].Requests
	if req[resources.CPU] != 500 || req[resources.Memory] != 3<<29 || req[resources.NvidiaGPU] != 1 {
		t.Errorf("requests = %v", req)
	}
}

// Nodes of GPUs the catalog learnt lately, or does not know, load; a node that gives no
// way to tell its GPUs' memory is an error naming the node's field.
func TestNodeGPUModels(t *testing.T) {
	node := func(labels, alloc string) string {
		return "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {" + labels + "}\nstatus:\n  allocatable: {" + alloc + "}\n"
	}
	tests := []struct {
		name, yaml string
		wantErr    string // "" = loads
	}{
		{"GFD B200", node(`nvidia.com/gpu.product: NVIDIA-B200, nvidia.com/gpu.count: "8"`, `nvidia.com/gpu: "8"`), ""},
		{"GFD RTX PRO 6000 MIG", node(`nvidia.com/gpu.product: NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition, nvidia.com/gpu.count: "1", `+
			`nvidia.com/mig.strategy: mixed, nvidia.com/mig.config: all-balanced`, `nvidia.com/mig-1g.24gb: "2", nvidia.com/mig-2g.48gb: "1"`), ""},
		{"GKE accelerator only", node(`cloud.google.com/gke-accelerator: nvidia-l4`, `nvidia.com/gpu: "1"`), ""},
		{"EKS instance type only", node(`node.kubernetes.io/instance-type: p5.48xlarge`, `nvidia.com/gpu: "8"`), ""},
		{"unknown product with memory", node(`nvidia.com/gpu.product: NVIDIA-X300, nvidia.com/gpu.memory: "196608"`, `nvidia.com/gpu: "4"`), ""},
		{"unknown product without memory", node(`nvidia.com/gpu.product: NVIDIA-X300`, `nvidia.com/gpu: "4"`), "metadata.labels[nvidia.com/gpu.product]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadBytes("nodes.yaml", []byte(tc.yaml))
			if tc.wantErr == "" && err != nil {
				t.Fatalf("want the node to load, got %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "nodes.yaml")) {
				t.Fatalf("want an error naming the file and %q, got %v", tc.wantErr, err)
			}
		})
	}
}

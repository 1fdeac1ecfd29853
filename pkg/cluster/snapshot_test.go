package cluster_test

import (
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Bad snapshot input is an error naming the object and field.
func TestNewSnapshotErrors(t *testing.T) {
	cases := []struct {
		name  string
		nodes []cluster.Node
		topos []api.Topology
		want  string // substring of the error
	}{
		{"duplicate node", []cluster.Node{gt.MakeNode("a").Obj(), gt.MakeNode("a").Obj()}, nil, `node "a" (<generated>): metadata.name: duplicate`},
		{"empty name", []cluster.Node{{}}, nil, "metadata.name: must not be empty"},
		{"topology without levels", nil, []api.Topology{{Meta: api.Meta{Name: "t"}}}, `topology "t" (<generated>): levels`},
		{"empty level", nil, []api.Topology{{Meta: api.Meta{Name: "t"}, Levels: []string{""}}}, "levels[0]: empty node label"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cluster.NewSnapshot(tc.nodes, tc.topos)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// WithNode re-binds the pods of a replaced node; WithoutNode refuses while pods are bound.
func TestWithNodeAndWithoutNode(t *testing.T) {
	s, err := cluster.NewSnapshot([]cluster.Node{gt.MakeNode("a").GPUs("H100", 8).Obj()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := devices.ParseRequest(gt.Req("nvidia.com/gpu", "2"))
	a, _ := s.Devices(0).Fit(r)
	pod := cluster.BoundPod{Ref: cluster.PodRef{Workload: "ns/w", PodSet: "p"}, Node: "a", Requests: gt.Req("nvidia.com/gpu", "2"), Devices: a}
	s1, err := s.Apply([]cluster.Change{{Op: cluster.OpBind, Pod: pod}})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := s1.WithNode(gt.MakeNode("a").GPUs("H100", 8).Label("x", "y").Obj())
	if err != nil {
		t.Fatal(err)
	}
	if s2.Node(0).Labels["x"] != "y" || s2.Devices(0).Free()[resources.NvidiaGPU] != 6 {
		t.Fatalf("replaced node lost its pod or labels")
	}
	if _, err := s2.WithNode(gt.MakeNode("a").GPUs("H100", 1).Obj()); err == nil {
		t.Fatal("a node too small for its bound pod was accepted")
	}
	if _, err := s2.WithoutNode("a"); err == nil || !strings.Contains(err.Error(), "still bound") {
		t.Fatalf("err = %v", err)
	}
	s3, err := s2.Apply([]cluster.Change{{Op: cluster.OpRemove, Pod: pod}})
	if err != nil {
		t.Fatal(err)
	}
	if s4, err := s3.WithoutNode("a"); err != nil || s4.NumNodes() != 0 {
		t.Fatalf("WithoutNode: %v", err)
	}
}

// ExpandPool rejects bad pools naming the field, and lays out MIG pools.
func TestExpandPoolTable(t *testing.T) {
	cases := []struct {
		name    string
		pool    api.NodePool
		want    string // substring of the error; "" = valid
		wantMIG int64  // nvidia.com/mig-1g.10gb per node when valid
	}{
		{"mig pool", api.NodePool{Meta: api.Meta{Name: "m"}, Count: 2, GPUModel: "H100", GPUsPerNode: 2,
			Sharing: devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: "all-1g.10gb"}}, "", 14},
		{"negative count", api.NodePool{Meta: api.Meta{Name: "p"}, Count: -1}, "count: must not be negative", 0},
		{"unknown model", api.NodePool{Meta: api.Meta{Name: "p"}, Count: 1, GPUModel: "Z9", GPUsPerNode: 1}, "gpuModel: unknown GPU model", 0},
		{"bad topology", api.NodePool{Meta: api.Meta{Name: "p"}, Count: 1, Topology: []api.TopologyLevelSpec{{Key: "rack"}}}, "topology[0].nodesPerDomain", 0},
		{"bad capacity type", api.NodePool{Meta: api.Meta{Name: "p"}, Count: 1, CapacityType: "cheap"}, "capacityType", 0},
		{"MIG on T4", api.NodePool{Meta: api.Meta{Name: "p"}, Count: 1, GPUModel: "T4", GPUsPerNode: 1,
			Sharing: devices.Sharing{Mode: devices.MIG, Layout: "all-1g.10gb"}}, "sharing", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes, err := cluster.ExpandPool(tc.pool)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := int64(nodes[1].Devices.Capacity()[resources.MIGResource("1g.10gb")]); got != tc.wantMIG {
				t.Fatalf("MIG capacity = %d, want %d", got, tc.wantMIG)
			}
		})
	}
}

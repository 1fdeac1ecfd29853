package cluster_test

import (
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	resourcev1 "k8s.io/api/resource/v1"
)

// A node dump's ResourceSlices give GPUs to the nodes that advertise none through the
// device plugin; a node that advertises some keeps those; a broken slice is an error
// naming the node and the driver.
func TestNodesOfReadsResourceSlices(t *testing.T) {
	a100Slices := gt.MakeDevices("A100-80GB", 4).Slices("n")
	dup := gt.MakeDevices("H100", 2).Slices("n")
	dup[0].Spec.Devices[1].Name = dup[0].Spec.Devices[0].Name
	for _, tc := range []struct {
		name      string
		node      *k8s.NodeWrapper
		slices    []resourcev1.ResourceSlice
		wantGPUs  int
		wantModel string // of GPU 0
		wantErr   []string
	}{
		{name: "published only in slices", node: k8s.MakeNode("n"), slices: a100Slices, wantGPUs: 4, wantModel: "A100-SXM4-80GB"},
		{name: "device plugin wins", node: k8s.MakeNode("n").H100(8), slices: a100Slices, wantGPUs: 8, wantModel: "H100-SXM5-80GB"},
		{name: "slices of another node", node: k8s.MakeNode("n"), slices: gt.MakeDevices("H100", 2).Slices("other")},
		{name: "no slices", node: k8s.MakeNode("n")},
		{name: "duplicate device names", node: k8s.MakeNode("n"), slices: dup, wantErr: []string{`node "n"`, "gpu.nvidia.com"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := &api.Objects{Nodes: []api.Node{{Object: *tc.node.Obj()}}}
			for _, s := range tc.slices {
				objs.ResourceSlices = append(objs.ResourceSlices, api.ResourceSlice{Object: s})
			}
			nodes, err := cluster.NodesOf(objs)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("no error, want one naming %q", tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not name %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := nodes[0].GPUCount(); got != tc.wantGPUs {
				t.Fatalf("%d GPUs, want %d", got, tc.wantGPUs)
			}
			if tc.wantGPUs > 0 {
				if got := string(nodes[0].Devices.GPUs()[0].Model); got != tc.wantModel {
					t.Errorf("model %s, want %s", got, tc.wantModel)
				}
			}
		})
	}
}

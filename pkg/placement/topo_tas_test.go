package placement_test

import (
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/placement"
)

const block = "topology.gantry.dev/block"

// rackNodes builds n 8-GPU nodes in rack r (of block b when b is set).
func rackNodes(n int, b, r string) []cluster.Node {
	var out []cluster.Node
	for k := 0; k < n; k++ {
		nb := gt.MakeNode(r+"-n"+string(rune('0'+k))).GPUs("H100", 8).Label(rack, r)
		if b != "" {
			nb = nb.Label(block, b)
		}
		out = append(out, nb.Obj())
	}
	return out
}

func rackCluster(t *testing.T, sizes ...int) *cluster.Overlay {
	var nodes []cluster.Node
	for k, n := range sizes {
		nodes = append(nodes, rackNodes(n, "", "r"+string(rune('0'+k)))...)
	}
	return snap(t, rackTopo, nodes...).Overlay()
}

// leaderWorkers is a leader (1 pod) and workers (n pods), one whole node each, in group
// g with topo on both.
func leaderWorkers(n int32, g string, leader, workers api.TopologyRequest) *api.Workload {
	eight := gt.Req("nvidia.com/gpu", "8")
	w := gt.MakeWorkload("ns", "lws").PodSet("leader", 1).Requests(eight).PodSet("workers", n).Requests(eight).Obj()
	leader.Group, workers.Group = g, g
	w.PodSets[0].Topology, w.PodSets[1].Topology = &leader, &workers
	return w
}

// Kueue's podset-group-name: the two pod sets of a group land in one domain of their
// level together, or the placement is refused with a reason naming the group.
func TestPodSetGroupPlacement(t *testing.T) {
	req := api.TopologyRequest{Mode: api.TopologyRequired, Level: rack}
	pref := api.TopologyRequest{Mode: api.TopologyPreferred, Level: rack}
	cases := []struct {
		name      string
		racks     []int
		w         *api.Workload
		wantRacks map[string]int // nil: refused
		wantCode  placement.FailureCode
		wantWhy   string
	}{
		// Alone, workers would best-fit r0 (2 nodes) and the leader r2 (1 node).
		{"group shares the rack that holds both", []int{2, 3, 1}, leaderWorkers(2, "g", req, req), map[string]int{"r1": 3}, "", ""},
		{"no rack holds the group", []int{2, 2}, leaderWorkers(2, "g", req, req), nil, placement.TopologyUnsatisfied, `pod set group "g": no ` + rack + ` domain has room for 1 pod of leader + 2 pods of workers together`},
		{"preferred group falls back to several racks", []int{2, 2}, leaderWorkers(2, "g", pref, pref), map[string]int{"r0": 2, "r1": 1}, "", ""},
		{"members disagree on the level", []int{4}, leaderWorkers(2, "g", req, api.TopologyRequest{Mode: api.TopologyRequired, Level: cluster.LabelHostname}),
			nil, placement.InvalidWorkload, `pod set group "g": pod set "workers" asks for Required kubernetes.io/hostname`},
		{"members disagree on the mode", []int{4}, leaderWorkers(2, "g", req, pref), nil, placement.InvalidWorkload, `pod set group "g"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ov := rackCluster(t, tc.racks...)
			pl, d := placement.PlaceWorkload(ov, tc.w, nil, placement.Options{})
			if tc.wantRacks == nil {
				if d == nil {
					t.Fatalf("placed %v, want refused", racksOf(ov, pl))
				}
				if d.Code() != tc.wantCode || !strings.Contains(d.String(), tc.wantWhy) {
					t.Fatalf("refused with %s: %s, want %s naming %q", d.Code(), d, tc.wantCode, tc.wantWhy)
				}
				return
			}
			if d != nil {
				t.Fatalf("refused: %s", d)
			}
			if got := racksOf(ov, pl); !equalCounts(got, tc.wantRacks) {
				t.Fatalf("racks = %v, want %v", got, tc.wantRacks)
			}
		})
	}
}

// A group of one pod set cannot be honoured: refused naming the group.
func TestPodSetGroupOfOne(t *testing.T) {
	ov := rackCluster(t, 2)
	w := leaderWorkers(1, "", api.TopologyRequest{Mode: api.TopologyRequired, Level: rack}, api.TopologyRequest{Mode: api.TopologyRequired, Level: rack})
	w.PodSets[1].Topology.Group = "solo"
	_, d := placement.PlaceWorkload(ov, w, nil, placement.Options{})
	if d == nil || d.Code() != placement.InvalidWorkload || !strings.Contains(d.Err, `group "solo" holds only pod set "workers"`) {
		t.Fatalf("diagnosis = %v, want invalid naming group solo", d)
	}
}

// The group's pods come back in pod-set order even when another pod set sits between
// the members, and a pod set outside the group is placed on its own.
func TestPodSetGroupKeepsPodSetOrder(t *testing.T) {
	ov := rackCluster(t, 1, 3)
	eight := gt.Req("nvidia.com/gpu", "8")
	w := gt.MakeWorkload("ns", "w").PodSet("leader", 1).Requests(eight).RequiredTopology(rack).
		PodSet("side", 1).Requests(eight).
		PodSet("workers", 2).Requests(eight).RequiredTopology(rack).Obj()
	w.PodSets[0].Topology.Group, w.PodSets[2].Topology.Group = "g", "g"
	pl, d := placement.PlaceWorkload(ov, w, nil, placement.Options{})
	if d != nil {
		t.Fatalf("refused: %s", d)
	}
	var sets []string
	for _, p := range pl.Pods {
		sets = append(sets, p.PodSet)
		if p.PodSet != "side" && !strings.HasPrefix(p.Node, "r1-") {
			t.Errorf("%s pod %d on %s, want rack r1", p.PodSet, p.Index, p.Node)
		}
	}
	if got := strings.Join(sets, ","); got != "leader,side,workers,workers" {
		t.Fatalf("pod order = %s", got)
	}
}

// Kueue's podset-unconstrained-topology: pods may span racks, filling the rack with the
// least room first, where a required rack refuses or takes the roomy rack.
func TestUnconstrainedTopology(t *testing.T) {
	un := api.TopologyRequest{Mode: api.TopologyUnconstrained}
	req := api.TopologyRequest{Mode: api.TopologyRequired, Level: rack}
	cases := []struct {
		name  string
		racks []int
		pods  int32
		topo  api.TopologyRequest
		want  map[string]int // nil: refused
	}{
		{"unconstrained fills the small gap first", []int{1, 3}, 2, un, map[string]int{"r0": 1, "r1": 1}},
		{"required takes the roomy rack", []int{1, 3}, 2, req, map[string]int{"r1": 2}},
		{"unconstrained spans racks", []int{1, 3}, 4, un, map[string]int{"r0": 1, "r1": 3}},
		{"required refuses what no rack holds", []int{1, 3}, 4, req, nil},
		{"unconstrained refuses what the cluster cannot hold", []int{1, 3}, 5, un, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ov := rackCluster(t, tc.racks...)
			w := gt.MakeWorkload("ns", "w").PodSet("main", tc.pods).Requests(gt.Req("nvidia.com/gpu", "8")).Obj()
			topo := tc.topo
			w.PodSets[0].Topology = &topo
			pl, d := placement.PlaceWorkload(ov, w, nil, placement.Options{})
			if tc.want == nil {
				if d == nil {
					t.Fatalf("placed %v, want refused", racksOf(ov, pl))
				}
				return
			}
			if d != nil {
				t.Fatalf("refused: %s", d)
			}
			if got := racksOf(ov, pl); !equalCounts(got, tc.want) {
				t.Fatalf("racks = %v, want %v", got, tc.want)
			}
		})
	}
}

// Kueue's multi-layer slices: 4 pods per block and 2 per rack inside it. Block b0 has 4
// nodes but only one rack of 2, so the request lands in b1, 2 pods in each rack.
func TestMultiLayerSlices(t *testing.T) {
	var nodes []cluster.Node
	nodes = append(nodes, rackNodes(2, "b0", "r0")...)
	nodes = append(nodes, rackNodes(1, "b0", "r1")...)
	nodes = append(nodes, rackNodes(1, "b0", "r2")...)
	nodes = append(nodes, rackNodes(2, "b1", "r3")...)
	nodes = append(nodes, rackNodes(2, "b1", "r4")...)
	topo := []api.Topology{{Meta: api.Meta{Name: "dc"}, Levels: []string{block, rack}}}
	layered := api.TopologyRequest{SliceLevel: block, SliceSize: 4}
	layered.InnerSlices[0] = api.SliceLayer{Level: rack, Size: 2}
	inverted := api.TopologyRequest{SliceLevel: rack, SliceSize: 4}
	inverted.InnerSlices[0] = api.SliceLayer{Level: block, Size: 2}
	cases := []struct {
		name    string
		topo    api.TopologyRequest
		want    map[string]int // nil: refused
		wantWhy string
	}{
		{"one layer takes the first block that has room", api.TopologyRequest{SliceLevel: block, SliceSize: 4}, map[string]int{"r0": 2, "r1": 1, "r2": 1}, ""},
		{"the rack layer moves it to b1", layered, map[string]int{"r3": 2, "r4": 2}, ""},
		{"an inner layer broader than the outer one is refused", inverted, nil, "slice layer " + block + " must be a narrower level than " + rack},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ov := snap(t, topo, nodes...).Overlay()
			w := gt.MakeWorkload("ns", "w").PodSet("main", 4).Requests(gt.Req("nvidia.com/gpu", "8")).Obj()
			tr := tc.topo
			w.PodSets[0].Topology = &tr
			pl, d := placement.PlaceWorkload(ov, w, nil, placement.Options{})
			if tc.want == nil {
				if d == nil || d.Code() != placement.TopologyUnsatisfied || !strings.Contains(d.Topology, tc.wantWhy) {
					t.Fatalf("diagnosis = %v, want topology failure %q", d, tc.wantWhy)
				}
				return
			}
			if d != nil {
				t.Fatalf("refused: %s", d)
			}
			if got := racksOf(ov, pl); !equalCounts(got, tc.want) {
				t.Fatalf("racks = %v, want %v", got, tc.want)
			}
		})
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

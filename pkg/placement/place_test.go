package placement_test

import (
	"math/rand"
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/placement"
	corev1 "k8s.io/api/core/v1"
)

func snap(t testing.TB, topo []api.Topology, nodes ...cluster.Node) *cluster.Snapshot {
	t.Helper()
	s, err := cluster.NewSnapshot(nodes, topo)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const rack = "topology.gantry.dev/rack"

var rackTopo = []api.Topology{{Meta: api.Meta{Name: "default"}, Levels: []string{rack}}}

// Feasibility rules: each case puts one 1-GPU pod on one node; want is the Key of the
// first rejection ("" = fits).
func TestFeasibilityRules(t *testing.T) {
	gpuPod := func() *gt.WorkloadWrapper {
		return gt.MakeWorkload("ns", "w").PodSet("main", 1).Requests(gt.Req("cpu", "1", "nvidia.com/gpu", "1"))
	}
	cases := []struct {
		name string
		node cluster.Node
		w    *api.Workload
		fc   placement.FlavorConstraint
		want string // Key of the first rejection; "" means the pod fits
	}{
		{"fits", gt.MakeNode("n").GPUs("H100", 8).Obj(), gpuPod().Obj(), placement.FlavorConstraint{}, ""},
		{"cordoned", gt.MakeNode("n").GPUs("H100", 8).Unschedulable().Obj(), gpuPod().Obj(), placement.FlavorConstraint{}, "Unschedulable"},
		{"not ready", gt.MakeNode("n").GPUs("H100", 8).NotReady().Obj(), gpuPod().Obj(), placement.FlavorConstraint{}, "NotReady"},
		{"taint", gt.MakeNode("n").GPUs("H100", 8).Taint("spot", "true", corev1.TaintEffectNoSchedule).Obj(), gpuPod().Obj(), placement.FlavorConstraint{}, "Taint spot=true:NoSchedule"},
		{"taint tolerated", gt.MakeNode("n").GPUs("H100", 8).Taint("spot", "true", corev1.TaintEffectNoSchedule).Obj(),
			gpuPod().Toleration("spot", "true", "").Obj(), placement.FlavorConstraint{}, ""},
		{"taint tolerated by flavor", gt.MakeNode("n").GPUs("H100", 8).Taint("spot", "true", corev1.TaintEffectNoExecute).Obj(), gpuPod().Obj(),
			placement.FlavorConstraint{Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}}, ""},
		{"prefer-no-schedule is only a score", gt.MakeNode("n").GPUs("H100", 8).Taint("x", "", corev1.TaintEffectPreferNoSchedule).Obj(), gpuPod().Obj(), placement.FlavorConstraint{}, ""},
		{"selector", gt.MakeNode("n").GPUs("H100", 8).Label("pool", "a").Obj(), gpuPod().NodeSelector("pool", "b").Obj(), placement.FlavorConstraint{}, "NodeSelector pool"},
		{"affinity In", gt.MakeNode("n").GPUs("H100", 8).Label("zone", "z1").Obj(), gpuPod().Affinity("zone", corev1.NodeSelectorOpIn, "z1", "z2").Obj(), placement.FlavorConstraint{}, ""},
		{"affinity NotIn", gt.MakeNode("n").GPUs("H100", 8).Label("zone", "z1").Obj(), gpuPod().Affinity("zone", corev1.NodeSelectorOpNotIn, "z1").Obj(), placement.FlavorConstraint{}, "NodeAffinity"},
		{"affinity Exists", gt.MakeNode("n").GPUs("H100", 8).Obj(), gpuPod().Affinity("zone", corev1.NodeSelectorOpExists).Obj(), placement.FlavorConstraint{}, "NodeAffinity"},
		{"affinity DoesNotExist", gt.MakeNode("n").GPUs("H100", 8).Obj(), gpuPod().Affinity("zone", corev1.NodeSelectorOpDoesNotExist).Obj(), placement.FlavorConstraint{}, ""},
		{"affinity Gt", gt.MakeNode("n").GPUs("H100", 8).Label("gen", "3").Obj(), gpuPod().Affinity("gen", corev1.NodeSelectorOpGt, "2").Obj(), placement.FlavorConstraint{}, ""},
		{"affinity Lt", gt.MakeNode("n").GPUs("H100", 8).Label("gen", "3").Obj(), gpuPod().Affinity("gen", corev1.NodeSelectorOpLt, "3").Obj(), placement.FlavorConstraint{}, "NodeAffinity"},
		{"flavor labels", gt.MakeNode("n").GPUs("H100", 8).Obj(), gpuPod().Obj(), placement.FlavorConstraint{NodeLabels: map[string]string{"gpu": "h100"}}, "FlavorLabels gpu"},
		{"cpu", gt.MakeNode("n").GPUs("H100", 8).CPU("500m").Obj(), gpuPod().Obj(), placement.FlavorConstraint{}, "Insufficient cpu"},
		{"no GPUs", gt.MakeNode("n").Obj(), gpuPod().Obj(), placement.FlavorConstraint{}, "Devices nvidia.com/gpu"},
		{"2 MPS replicas in one container", gt.MakeNode("n").GPUs("H100", 2).Sharing(devices.Sharing{Mode: devices.MPS, Replicas: 4}).Obj(),
			gt.MakeWorkload("ns", "w").PodSet("main", 1).Requests(gt.Req("nvidia.com/gpu", "2")).ContainerGPU(2).Obj(), placement.FlavorConstraint{}, "Devices nvidia.com/gpu"},
		{"2 MPS replicas in two containers", gt.MakeNode("n").GPUs("H100", 2).Sharing(devices.Sharing{Mode: devices.MPS, Replicas: 4}).Obj(),
			gt.MakeWorkload("ns", "w").PodSet("main", 1).Requests(gt.Req("nvidia.com/gpu", "2")).ContainerGPU(1).Obj(), placement.FlavorConstraint{}, ""},
		{"MIG pod on whole GPUs", gt.MakeNode("n").GPUs("H100", 8).Obj(),
			gt.MakeWorkload("ns", "w").PodSet("main", 1).Requests(gt.Req("nvidia.com/mig-1g.10gb", "1")).Obj(), placement.FlavorConstraint{}, "Devices nvidia.com/mig-1g.10gb"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ov := snap(t, nil, tc.node).Overlay()
			req, err := placement.NewPodRequest(&tc.w.PodSets[0], tc.fc)
			if err != nil {
				t.Fatal(err)
			}
			rej := placement.CheckPodOnNode(ov, req, "n")
			got := ""
			if len(rej) > 0 {
				got = rej[0].Key()
			}
			if got != tc.want {
				t.Fatalf("first rejection = %q, want %q (all: %v)", got, tc.want, rej)
			}
		})
	}
}

func racks(nodesPerRack int, rackNames ...string) []cluster.Node {
	var out []cluster.Node
	for _, r := range rackNames {
		for k := 0; k < nodesPerRack; k++ {
			out = append(out, gt.MakeNode(r+"-n"+string(rune('0'+k))).GPUs("H100", 8).Label(rack, r).Obj())
		}
	}
	return out
}

// A 4x8-GPU gang with required rack topology lands inside one rack when one has room.
func TestGangLandsInOneRack(t *testing.T) {
	nodes := racks(3, "r1", "r2") // r1: 3 nodes, r2: 3 nodes; fill two of r1
	s := snap(t, rackTopo, append(nodes, racks(4, "r3")...)...)
	ov := s.Overlay()
	w := gt.MakeWorkload("ns", "train").PodSet("workers", 4).Requests(gt.Req("nvidia.com/gpu", "8")).RequiredTopology(rack).Obj()
	pl, d := placement.PlaceWorkload(ov, w, nil, placement.Options{Rand: rand.New(rand.NewSource(1))})
	if d != nil {
		t.Fatalf("unexpected diagnosis: %s", d)
	}
	if len(pl.Pods) != 4 {
		t.Fatalf("placed %d pods, want 4", len(pl.Pods))
	}
	for _, p := range pl.Pods {
		if !strings.HasPrefix(p.Node, "r3-") {
			t.Fatalf("pod %d on %s: want rack r3 (the only rack with 4 nodes)", p.Index, p.Node)
		}
		if len(p.Devices.IDs()) != 8 {
			t.Fatalf("pod %d got %v, want 8 GPUs", p.Index, p.Devices.IDs())
		}
	}
}

// The same gang fails with a topology reason when no rack has room, and leaves no trace.
func TestGangFailsOnTopologyWithoutTrace(t *testing.T) {
	s := snap(t, rackTopo, racks(3, "r1", "r2")...)
	ov := s.Overlay()
	w := gt.MakeWorkload("ns", "train").PodSet("workers", 4).Requests(gt.Req("nvidia.com/gpu", "8")).RequiredTopology(rack).Obj()
	_, d := placement.PlaceWorkload(ov, w, nil, placement.Options{})
	if d == nil {
		t.Fatal("placed a 4-node gang in 3-node racks")
	}
	if !strings.Contains(d.Topology, "no "+rack+" domain has room for 4 pods") {
		t.Fatalf("topology reason = %q", d.Topology)
	}
	if d.Code() != placement.TopologyUnsatisfied {
		t.Fatalf("code = %q, want TopologyUnsatisfied", d.Code())
	}
	if len(ov.Changes()) != 0 {
		t.Fatalf("failed gang left %d changes", len(ov.Changes()))
	}
}

// Bin-pack fills a partly used node before an empty one; spread does the opposite.
func TestBinpackVersusSpread(t *testing.T) {
	for _, tc := range []struct {
		scorer string
		want   string // node the second pod lands on
	}{{"binpack", "a"}, {"spread", "b"}} {
		s := snap(t, nil, gt.MakeNode("a").GPUs("H100", 8).Obj(), gt.MakeNode("b").GPUs("H100", 8).Obj())
		ov := s.Overlay()
		first := gt.MakeWorkload("ns", "first").PodSet("main", 1).Requests(gt.Req("nvidia.com/gpu", "2")).NodeSelector(cluster.LabelHostname, "a").Obj()
		if _, d := placement.PlaceWorkload(ov, first, nil, placement.Options{}); d != nil {
			t.Fatal(d)
		}
		sc, err := placement.ScorersFor(api.PlacementPolicy{Scorers: []api.WeightedScorer{{Name: tc.scorer, Weight: 1}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		second := gt.MakeWorkload("ns", "second").PodSet("main", 1).Requests(gt.Req("nvidia.com/gpu", "2")).Obj()
		pl, d := placement.PlaceWorkload(ov, second, nil, placement.Options{Scorers: sc})
		if d != nil {
			t.Fatal(d)
		}
		if pl.Pods[0].Node != tc.want {
			t.Fatalf("%s: second pod on %s, want %s", tc.scorer, pl.Pods[0].Node, tc.want)
		}
	}
}

// 1g.10gb pods go to the MIG node and leave the empty full-GPU node whole.
func TestMIGPodsKeepWholeNodeFree(t *testing.T) {
	s := snap(t, nil, gt.MakeNode("full").GPUs("H100", 8).Obj(), gt.MakeNode("mig").GPUs("H100", 8).MIG("all-1g.10gb").Obj())
	ov := s.Overlay()
	w := gt.MakeWorkload("ns", "inf").PodSet("main", 4).Requests(gt.Req("nvidia.com/mig-1g.10gb", "1")).Obj()
	pl, d := placement.PlaceWorkload(ov, w, nil, placement.Options{})
	if d != nil {
		t.Fatal(d)
	}
	for _, p := range pl.Pods {
		if p.Node != "mig" {
			t.Fatalf("pod %d on %s, want mig", p.Index, p.Node)
		}
	}
	i, _ := ov.NodeIndex("full")
	if len(ov.PodsOn(i)) != 0 {
		t.Fatal("full-GPU node was touched")
	}
}

// A diagnosis counts nodes per reason and names the near miss.
func TestDiagnosisCounts(t *testing.T) {
	nodes := []cluster.Node{
		gt.MakeNode("spot1").GPUs("H100", 8).Taint("spot", "true", corev1.TaintEffectNoSchedule).Obj(),
		gt.MakeNode("spot2").GPUs("H100", 8).Taint("spot", "true", corev1.TaintEffectNoSchedule).Obj(),
		gt.MakeNode("small").GPUs("H100", 4).Obj(),
	}
	ov := snap(t, nil, nodes...).Overlay()
	w := gt.MakeWorkload("ns", "big").PodSet("main", 1).Requests(gt.Req("nvidia.com/gpu", "8")).Obj()
	_, d := placement.PlaceWorkload(ov, w, nil, placement.Options{})
	if d == nil {
		t.Fatal("8-GPU pod placed on nodes that cannot take it")
	}
	if d.TotalNodes != 3 || d.FitNodes != 0 || len(d.Counts) != 2 || d.Counts[0].Nodes != 2 || d.Counts[0].Key != "Taint spot=true:NoSchedule" {
		t.Fatalf("diagnosis = %+v", d)
	}
	if d.NearMiss == nil || d.NearMiss.Node != "small" {
		t.Fatalf("near miss = %+v", d.NearMiss)
	}
	if d.Code() != placement.NoNodeFits {
		t.Fatalf("code = %q, want NoNodeFits", d.Code())
	}
	if s := d.String(); !strings.Contains(s, "0 of 3 nodes fit: 2 taint spot=true:NoSchedule, 1 too few free GPUs") {
		t.Fatalf("String() = %q", s)
	}
}

// Nodes the free index and the static set let placement skip (full, MIG, CPU-only,
// tainted, cordoned) are still counted in a failed gang's diagnosis, under the reason a
// check of every node gives them.
func TestDiagnosisCountsSkippedNodes(t *testing.T) {
	ov := snap(t, nil,
		gt.MakeNode("a").GPUs("H100", 8).Obj(),
		gt.MakeNode("b").GPUs("H100", 8).Obj(),
		gt.MakeNode("m1").GPUs("A100-SXM4-40GB", 8).MIG("all-balanced").Obj(),
		gt.MakeNode("m2").GPUs("A100-SXM4-40GB", 8).MIG("all-balanced").Obj(),
		gt.MakeNode("c1").Obj(),
		gt.MakeNode("s1").GPUs("H100", 8).Taint("spot", "true", corev1.TaintEffectNoSchedule).Obj(),
		gt.MakeNode("x1").GPUs("H100", 8).Unschedulable().Obj(),
	).Overlay()
	w := gt.MakeWorkload("ns", "gang").PodSet("main", 3).Requests(gt.Req("nvidia.com/gpu", "8")).Obj()
	_, d := placement.PlaceWorkload(ov, w, nil, placement.Options{Rand: rand.New(rand.NewSource(1))})
	if d == nil {
		t.Fatal("a 3-node gang placed on 2 usable nodes")
	}
	want := "ns/gang: pod set main pod 2: 0 of 7 nodes fit: 5 too few free GPUs, 1 taint spot=true:NoSchedule, 1 unschedulable; gang 2 of 3 pods placed"
	if s := d.String(); !strings.HasPrefix(s, want) {
		t.Fatalf("String() = %q\nwant prefix %q", s, want)
	}
	if len(ov.Changes()) != 0 {
		t.Fatalf("failed gang left %d changes", len(ov.Changes()))
	}
}

// An unparsable GPU request is a diagnosis value naming the pod set, not a panic.
func TestInvalidRequestIsADiagnosis(t *testing.T) {
	ov := snap(t, nil, gt.MakeNode("a").GPUs("H100", 8).Obj()).Overlay()
	w := gt.MakeWorkload("ns", "bad").PodSet("main", 1).Requests(gt.Req("nvidia.com/gpu", "1", "gantry.dev/gpu-milli", "500")).Obj()
	_, d := placement.PlaceWorkload(ov, w, nil, placement.Options{})
	if d == nil || d.Err == "" || !strings.Contains(d.String(), `pod set "main"`) || d.Code() != placement.InvalidWorkload {
		t.Fatalf("diagnosis = %v (code %q)", d, d.Code())
	}
}

// Flavor constraints steer pods to the flavor's nodes.
func TestFlavorConstraintSteersPods(t *testing.T) {
	ov := snap(t, nil,
		gt.MakeNode("spot").GPUs("H100", 8).Label("tier", "spot").Taint("spot", "true", corev1.TaintEffectNoSchedule).Obj(),
		gt.MakeNode("ondemand").GPUs("H100", 8).Label("tier", "on-demand").Obj()).Overlay()
	f := placement.FlavorConstraintOf(api.ResourceFlavor{Meta: api.Meta{Name: "spot"}, NodeLabels: map[string]string{"tier": "spot"},
		Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}}})
	w := gt.MakeWorkload("ns", "w").PodSet("main", 1).Requests(gt.Req("nvidia.com/gpu", "1")).Obj()
	pl, d := placement.PlaceWorkload(ov, w, placement.FlavorConstraints{"main": f}, placement.Options{})
	if d != nil || pl.Pods[0].Node != "spot" {
		t.Fatalf("placement %+v, diagnosis %v: want node spot", pl, d)
	}
}

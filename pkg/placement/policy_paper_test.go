package placement_test

import (
	"math/rand"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// held is a pod already on a node before the decision: its requests and devices.
type held struct {
	node string
	req  resources.Vector
	devs devices.Assignment
}

// fractional is a node of n fractional-sharing T4 GPUs with cpu cores.
func fractional(name string, n int, cpu string) *gt.NodeWrapper {
	return gt.MakeNode(name).CPU(cpu).Memory("512Gi").GPUs("T4", n).Sharing(devices.Sharing{Mode: devices.Fractional})
}

// overlayWith is a snapshot of nodes with the held pods assumed on it.
func overlayWith(t *testing.T, nodes []cluster.Node, pods []held) *cluster.Overlay {
	t.Helper()
	ov := snap(t, nil, nodes...).Overlay()
	for k, h := range pods {
		if err := ov.Assume(cluster.PodRef{Workload: "ns/held", PodSet: "p", Index: k}, h.node, h.req, h.devs); err != nil {
			t.Fatalf("hold pod %d on %s: %v", k, h.node, err)
		}
	}
	return ov
}

func shareReq(cpu string, milli string) resources.Vector {
	return gt.Req("cpu", cpu, "memory", "1Gi", "gantry.dev/gpu-milli", milli)
}

func wholeReq(cpu string, n string) resources.Vector {
	return gt.Req("cpu", cpu, "memory", "1Gi", "nvidia.com/gpu", n)
}

// Each of the paper's policies chooses the node (and, for a share, the GPU) its
// simulator's score prefers; the expected choices are worked out by hand in the names.
func TestPaperPolicyChoices(t *testing.T) {
	cases := []struct {
		name     string
		policy   string
		nodes    []cluster.Node
		held     []held
		pod      resources.Vector
		wantNode string
		wantGPU  int // the share's GPU; -1 to not check
	}{
		{"bestfit: 100-(cpuLeft+16·gpuLeft)/2560 is 89 on the small node, 20 on the big one", placement.PolicyBestFit,
			[]cluster.Node{fractional("big", 8, "96").Obj(), fractional("small", 2, "16").Obj()}, nil,
			wholeReq("4", "1"), "small", -1},
		{"bestfit: with GPUs alike, the node left with less cpu (89 vs 70)", placement.PolicyBestFit,
			[]cluster.Node{fractional("roomy", 2, "64").Obj(), fractional("tight", 2, "16").Obj()}, nil,
			wholeReq("4", "1"), "tight", -1},
		{"bestfit: a share takes the GPU with the least free share that fits", placement.PolicyBestFit,
			[]cluster.Node{fractional("a", 3, "32").Obj()},
			[]held{{"a", shareReq("1", "600"), share(1, 600)}, {"a", shareReq("1", "500"), share(2, 500)}},
			shareReq("1", "300"), "a", 1},
		{"dotprod: the node whose free cpu and GPU align least with the pod (96 vs 91)", placement.PolicyDotProd,
			[]cluster.Node{fractional("big", 8, "96").Obj(), fractional("small", 2, "64").Obj()}, nil,
			wholeReq("8", "1"), "small", -1},
		{"packing: a share fills a partly used GPU (97) before an idle node (31)", placement.PolicyPacking,
			[]cluster.Node{fractional("idle", 2, "32").Obj(), fractional("used", 2, "32").Obj()},
			[]held{{"used", shareReq("1", "700"), share(0, 700)}},
			shareReq("1", "200"), "used", 0},
		{"packing: a whole GPU goes to a partly used node (49) before idle ones (32, 31)", placement.PolicyPacking,
			[]cluster.Node{fractional("idle1", 1, "32").Obj(), fractional("idle2", 2, "32").Obj(), fractional("used", 2, "32").Obj()},
			[]held{{"used", shareReq("1", "500"), share(0, 500)}},
			wholeReq("1", "1"), "used", -1},
		{"packing: among idle nodes the one with fewer GPUs (33-1 > 33-2)", placement.PolicyPacking,
			[]cluster.Node{fractional("two", 2, "32").Obj(), fractional("one", 1, "32").Obj()}, nil,
			wholeReq("1", "1"), "one", -1},
		{"clustering: a share joins the node that runs only shares", placement.PolicyClustering,
			[]cluster.Node{fractional("empty", 2, "32").Obj(), fractional("shares", 2, "32").Obj(), fractional("wholes", 2, "32").Obj()},
			[]held{{"shares", shareReq("1", "300"), share(0, 300)}, {"wholes", wholeReq("1", "1"), whole(0)}},
			shareReq("1", "300"), "shares", -1},
		{"clustering: a 1-GPU pod joins the node of 1-GPU pods", placement.PolicyClustering,
			[]cluster.Node{fractional("empty", 2, "32").Obj(), fractional("shares", 2, "32").Obj(), fractional("wholes", 2, "32").Obj()},
			[]held{{"shares", shareReq("1", "300"), share(0, 300)}, {"wholes", wholeReq("1", "1"), whole(0)}},
			wholeReq("1", "1"), "wholes", -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ov := overlayWith(t, tc.nodes, tc.held)
			pol, err := placement.NewPolicy(tc.policy, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, err := placement.NewSimplePodRequest(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			c, ok := pol.Choose(ov, p, rand.New(rand.NewSource(1)))
			if !ok || c.NodeName != tc.wantNode {
				t.Fatalf("chose %q (%v), want %q", c.NodeName, ok, tc.wantNode)
			}
			if tc.wantGPU >= 0 && (len(c.Devices.Devices) != 1 || c.Devices.Devices[0].GPU != tc.wantGPU) {
				t.Fatalf("devices %v, want GPU %d", c.Devices, tc.wantGPU)
			}
		})
	}
}

// The paper's FGD takes the GPU whose fragment for the typical pods drops most: with
// 700m pods typical, a 300m pod on the GPU with 500m free leaves 200m (the 500m that no
// 700m pod could use shrinks by 300m), where the idle GPU or node would change nothing.
func TestPaperFGDChoosesGPUByFragment(t *testing.T) {
	shapes := placement.NewShapeStats()
	for range 10 {
		shapes.Observe(shareReq("1", "700"))
	}
	ov := overlayWith(t, []cluster.Node{fractional("idle", 2, "32").Obj(), fractional("used", 2, "32").Obj()},
		[]held{{"used", shareReq("1", "500"), share(1, 500)}})
	pol, err := placement.NewPolicy(placement.PolicyFGD, shapes)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := placement.NewSimplePodRequest(shareReq("1", "300"))
	c, ok := pol.Choose(ov, p, rand.New(rand.NewSource(1)))
	if !ok || c.NodeName != "used" || c.Devices.Devices[0].GPU != 1 {
		t.Fatalf("chose %s %v, want the used node's GPU 1", c.NodeName, c.Devices)
	}
}

// Random picks every feasible node and every GPU with room, depending on the seed.
func TestPaperRandomUsesTheSeed(t *testing.T) {
	ov := overlayWith(t, []cluster.Node{fractional("a", 2, "32").Obj(), fractional("b", 2, "32").Obj()}, nil)
	pol, _ := placement.NewPolicy(placement.PolicyRandom, nil)
	p, _ := placement.NewSimplePodRequest(shareReq("1", "300"))
	seen := map[string]bool{}
	for seed := int64(0); seed < 40; seed++ {
		c, ok := pol.Choose(ov, p, rand.New(rand.NewSource(seed)))
		if !ok {
			t.Fatal("no node")
		}
		seen[c.NodeName+c.Devices.String()] = true
	}
	if len(seen) != 4 {
		t.Fatalf("choices over 40 seeds: %v, want all 4 node×GPU pairs", seen)
	}
}

// The paper's policies break ties by a node order drawn once per run (its simulator
// prefixes node names with a seeded random rank and takes the first name): the same
// policy keeps choosing the same of two identical nodes, and other runs may differ.
func TestPaperTiesFollowOneOrderPerRun(t *testing.T) {
	nodes := []cluster.Node{fractional("a", 2, "32").Obj(), fractional("b", 2, "32").Obj()}
	p, _ := placement.NewSimplePodRequest(wholeReq("1", "1"))
	firsts := map[string]bool{}
	for seed := int64(0); seed < 20; seed++ {
		ov := overlayWith(t, nodes, nil)
		pol, _ := placement.NewPolicy(placement.PolicyBestFit, nil)
		rnd := rand.New(rand.NewSource(seed))
		first, _ := pol.Choose(ov, p, rnd)
		for range 3 {
			if c, _ := pol.Choose(ov, p, rnd); c.NodeName != first.NodeName {
				t.Fatalf("seed %d: tie went to %s, then %s", seed, first.NodeName, c.NodeName)
			}
		}
		firsts[first.NodeName] = true
	}
	if len(firsts) != 2 {
		t.Fatalf("over 20 runs the first choice was always %v: the order is not drawn", firsts)
	}
}

// Gantry's policy keeps a scarce GPU model for the pods that need it: with most pods
// tied to T4, a pod that may run anywhere goes to the G2 node.
func TestGantryPolicyKeepsScarceModelFree(t *testing.T) {
	const model = "example.com/model"
	nodes := []cluster.Node{fractional("t4", 2, "32").Label(model, "T4").Obj(), fractional("g2", 2, "32").Label(model, "G2").Obj()}
	shapes := placement.NewShapeStats()
	for _, n := range nodes {
		shapes.ObserveNode(n.Labels, 2)
	}
	t4 := api.PodSet{Name: "p", Count: 1, Requests: wholeReq("1", "1"), NodeSelector: map[string]string{model: "T4"}}
	for range 9 {
		shapes.ObservePodSet(&t4)
	}
	shapes.Observe(wholeReq("1", "1"))
	pol, _ := placement.NewPolicy(placement.PolicyGantry, shapes)
	p, _ := placement.NewSimplePodRequest(wholeReq("1", "1"))
	for seed := int64(0); seed < 5; seed++ {
		c, ok := pol.Choose(overlayWith(t, nodes, nil), p, rand.New(rand.NewSource(seed)))
		if !ok || c.NodeName != "g2" {
			t.Fatalf("seed %d: chose %q, want g2", seed, c.NodeName)
		}
	}
}

// Gantry's policy sends a CPU-only pod where its cpu strands no GPU, and a GPU pod that
// asks little cpu to the node short of cpu.
func TestGantryPolicyAvoidsStrandingGPUs(t *testing.T) {
	nodes := []cluster.Node{fractional("lean", 8, "16").Obj(), fractional("rich", 8, "128").Obj()}
	shapes := placement.NewShapeStats()
	for range 10 {
		shapes.Observe(wholeReq("8", "1")) // the workload asks 8 cores per GPU
	}
	cases := []struct {
		name string
		pod  resources.Vector
		want string
	}{
		{"cpu-only pod", gt.Req("cpu", "12", "memory", "1Gi"), "rich"},
		{"GPU pod with one core", wholeReq("1", "1"), "lean"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pol, _ := placement.NewPolicy(placement.PolicyGantry, shapes)
			p, _ := placement.NewSimplePodRequest(tc.pod)
			c, ok := pol.Choose(overlayWith(t, nodes, nil), p, rand.New(rand.NewSource(1)))
			if !ok || c.NodeName != tc.want {
				t.Fatalf("chose %q, want %q", c.NodeName, tc.want)
			}
		})
	}
}

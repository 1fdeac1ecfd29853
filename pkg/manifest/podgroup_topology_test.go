package manifest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
)

// podGroupDoc is PodGroup ns/pg with minMember 1 and the given spec.networkTopology
// (flow YAML; "" for none).
func podGroupDoc(nt string) string {
	spec := "{minMember: 1}"
	if nt != "" {
		spec = "{minMember: 1, networkTopology: " + nt + "}"
	}
	return "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg, namespace: ns}\nspec: " + spec + "\n"
}

// TestPodGroupTopologyLikeTheLoader: a PodGroup read from a cluster, against the
// HyperNodes ResolveHyperNodes makes of the same objects, gives its pods the topology
// request the loader gives a plain pod of that PodGroup loaded from files; and
// ResolveHyperNodes gives the loader's HyperNode Topology.
func TestPodGroupTopologyLikeTheLoader(t *testing.T) {
	hns := []string{
		hyperNodeYAML("s0", 1, "rack", regexNode("^n[01]$")),
		hyperNodeYAML("s1", 1, "rack", labelNode("rack: b")),
		hyperNodeYAML("spine", 2, "spine", exactHN("s0"), exactHN("s1")),
	}
	nodes := []NodeLabels{{Name: "n0"}, {Name: "n1"}, {Name: "n2", Labels: map[string]string{"rack": "b"}}, {Name: "n3", Labels: map[string]string{"rack": "b"}}}
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, annotations: {scheduling.k8s.io/group-name: pg}}\n" +
		"spec: {schedulerName: volcano, containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}\n"
	live, err := ResolveHyperNodes("cluster", liveObjects(t, hns...), nodes)
	if err != nil {
		t.Fatal(err)
	}
	for _, nt := range []string{
		"",
		"{mode: hard, highestTierAllowed: 1}",
		"{highestTierAllowed: 2}",
		"{mode: soft, highestTierAllowed: 1}",
		"{mode: hard, highestTierName: rack}",
		"{mode: soft, highestTierName: spine}",
	} {
		t.Run(nt, func(t *testing.T) {
			objs, err := LoadBytes("in.yaml", []byte(docs(hyperNodeCluster(), podGroupDoc(nt), pod)))
			if err != nil {
				t.Fatal(err)
			}
			var want *api.TopologyRequest
			for _, w := range objs.Workloads {
				want = w.PodSets[0].Topology
			}
			if len(objs.Workloads) != 1 || (nt != "" && want == nil) {
				t.Fatalf("loader: %d workloads, topology %+v; want one with a request", len(objs.Workloads), want)
			}
			got, err := PodGroupTopology("cluster", liveObjects(t, podGroupDoc(nt))[0], live.HyperNodes)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("PodGroupTopology = %+v, want the loader's %+v", got, want)
			}
			for _, topo := range objs.Topologies {
				if topo.Name == api.HyperNodeTopology && (live.Topology == nil || !reflect.DeepEqual(live.Topology.Levels, topo.Levels)) {
					t.Errorf("ResolveHyperNodes topology = %+v, want levels %v", live.Topology, topo.Levels)
				}
			}
		})
	}
}

// TestPodGroupTopologyErrors: a networkTopology the loader refuses is refused with the
// PodGroup and field named; without HyperNodes a bounded request keeps no level (as the
// loader leaves it) and a tier name is unknown.
func TestPodGroupTopologyErrors(t *testing.T) {
	rack := []api.HyperNode{{Meta: api.Meta{Name: "s0"}, Tier: 1, TierName: "rack", Nodes: []string{"n0"}}}
	for _, tc := range []struct {
		name    string
		nt      string
		hns     []api.HyperNode
		want    *api.TopologyRequest
		wantErr []string
	}{
		{name: "no HyperNodes, tier bound", nt: "{highestTierAllowed: 1}",
			want: &api.TopologyRequest{Mode: api.TopologyRequired, HighestTierAllowed: 1}},
		{name: "no HyperNodes, tier name", nt: "{highestTierName: rack}",
			wantErr: []string{"PodGroup ns/pg", "spec.networkTopology.highestTierName", `unknown tier "rack"`}},
		{name: "unknown tier name", nt: "{highestTierName: spine}", hns: rack,
			wantErr: []string{"PodGroup ns/pg", "spec.networkTopology.highestTierName", "rack"}},
		{name: "unknown mode", nt: "{mode: strict, highestTierAllowed: 1}", hns: rack,
			wantErr: []string{"PodGroup ns/pg", "spec.networkTopology.mode", `"strict"`}},
		{name: "both bounds", nt: "{highestTierAllowed: 1, highestTierName: rack}", hns: rack,
			wantErr: []string{"PodGroup ns/pg", "spec.networkTopology.highestTierName", "not both"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PodGroupTopology("cluster", liveObjects(t, podGroupDoc(tc.nt))[0], tc.hns)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("no error (request %+v), want one naming %q", got, tc.wantErr)
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
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("PodGroupTopology = %+v, want %+v", got, tc.want)
			}
		})
	}
}

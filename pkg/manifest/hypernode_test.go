package manifest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
)

// hnNodeYAML is v1 Node name with 8 GPUs and the given labels (a flow map).
func hnNodeYAML(name, labels string) string {
	labels = strings.Replace(labels, "{", "{nvidia.com/gpu.product: NVIDIA-B200, ", 1)
	labels = strings.Replace(labels, ", }", "}", 1)
	return fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: %s}\n"+
		"status: {allocatable: {cpu: \"64\", memory: 512Gi, pods: \"110\", nvidia.com/gpu: \"8\"}}\n", name, labels)
}

// hyperNodeYAML is HyperNode name of tier (tierName when not empty) with members given
// as YAML list items.
func hyperNodeYAML(name string, tier int, tierName string, members ...string) string {
	tn := ""
	if tierName != "" {
		tn = "  tierName: " + tierName + "\n"
	}
	return fmt.Sprintf("apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: %s}\nspec:\n  tier: %d\n%s  members:\n%s",
		name, tier, tn, strings.Join(members, ""))
}

func exactNode(n string) string {
	return "  - {type: Node, selector: {exactMatch: {name: " + n + "}}}\n"
}
func regexNode(p string) string {
	return "  - {type: Node, selector: {regexMatch: {pattern: \"" + p + "\"}}}\n"
}
func labelNode(kv string) string {
	return "  - {type: Node, selector: {labelMatch: {matchLabels: {" + kv + "}}}}\n"
}
func exactHN(n string) string {
	return "  - {type: HyperNode, selector: {exactMatch: {name: " + n + "}}}\n"
}

// hyperNodeCluster: nodes n0..n3; rack s0 = n0,n1 (by name), rack s1 = n2,n3 (by label),
// spine = both racks. Tier names rack (1) and spine (2).
func hyperNodeCluster() string {
	return docs(volcanoSetup(),
		hnNodeYAML("n0", "{}"), hnNodeYAML("n1", "{}"), hnNodeYAML("n2", "{rack: b}"), hnNodeYAML("n3", "{rack: b}"),
		hyperNodeYAML("s0", 1, "rack", regexNode("^n[01]$")),
		hyperNodeYAML("s1", 1, "rack", labelNode("rack: b")),
		hyperNodeYAML("spine", 2, "spine", exactHN("s0"), exactHN("s1")))
}

// TestHyperNodeTopology: HyperNodes become one Topology with a level per tier, the nodes
// get their tier labels, and highestTierName becomes the tier it names.
func TestHyperNodeTopology(t *testing.T) {
	job := vcJobYAML("train", "", "  networkTopology: {mode: hard, highestTierName: rack}\n", taskYAML("w", 2, "nvidia.com/gpu: 8", ""))
	pg := "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg, namespace: ns}\n" +
		"spec: {minMember: 1, networkTopology: {highestTierName: spine}}\n"
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, annotations: {scheduling.k8s.io/group-name: pg}}\n" +
		"spec: {schedulerName: volcano, containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}\n"
	objs, err := LoadBytes("in.yaml", []byte(docs(hyperNodeCluster(), job, pg, pod)))
	if err != nil {
		t.Fatal(err)
	}
	var topo *api.Topology
	for i := range objs.Topologies {
		if objs.Topologies[i].Name == api.HyperNodeTopology {
			topo = &objs.Topologies[i]
		}
	}
	wantLevels := []string{api.HyperNodeTierLabel(2), api.HyperNodeTierLabel(1)}
	if topo == nil || !reflect.DeepEqual(topo.Levels, wantLevels) {
		t.Fatalf("HyperNode topology = %+v, want levels %v", topo, wantLevels)
	}
	wantLabels := map[string][2]string{"n0": {"s0", "spine"}, "n1": {"s0", "spine"}, "n2": {"s1", "spine"}, "n3": {"s1", "spine"}}
	for _, n := range objs.Nodes {
		l := n.Object.Labels
		got := [2]string{l[api.HyperNodeTierLabel(1)], l[api.HyperNodeTierLabel(2)]}
		if got != wantLabels[n.Object.Name] {
			t.Errorf("node %s tiers = %v, want %v", n.Object.Name, got, wantLabels[n.Object.Name])
		}
	}
	wantTier := map[string]int32{"ns/train": 1, "ns/pg": 2}
	for _, w := range objs.Workloads {
		want, ok := wantTier[w.Key()]
		if !ok {
			continue
		}
		for _, ps := range w.PodSets {
			tr := ps.Topology
			if tr == nil || tr.HighestTierAllowed != want || tr.Level != api.HyperNodeTierLabel(1) || tr.Mode != api.TopologyRequired {
				t.Errorf("%s pod set %s topology = %+v, want hard, tier %d of the HyperNode levels", w.Key(), ps.Name, tr, want)
			}
		}
		delete(wantTier, w.Key())
	}
	if len(wantTier) > 0 {
		t.Errorf("workloads not found: %v", wantTier)
	}
}

// TestHyperNodeTierFill: a node in a tier-1 HyperNode but in none of tier 2 is labelled
// at tier 2 with its tier-1 HyperNode (within it is within a HyperNode of tier <= 2);
// a node in no HyperNode gets no label.
func TestHyperNodeTierFill(t *testing.T) {
	objs, err := LoadBytes("in.yaml", []byte(docs(hnNodeYAML("a", "{}"), hnNodeYAML("b", "{}"), hnNodeYAML("c", "{}"),
		hyperNodeYAML("ra", 1, "", exactNode("a")),
		hyperNodeYAML("top", 3, "", exactNode("b")))))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{
		"a": {api.HyperNodeTierLabel(1): "ra", api.HyperNodeTierLabel(2): "ra", api.HyperNodeTierLabel(3): "ra"},
		"b": {api.HyperNodeTierLabel(3): "top"},
		"c": nil,
	}
	for _, n := range objs.Nodes {
		got := map[string]string{}
		for k, v := range n.Object.Labels {
			if strings.HasPrefix(k, "topology.gantry.dev/hypernode-tier-") {
				got[k] = v
			}
		}
		if len(got) == 0 && want[n.Object.Name] == nil {
			continue
		}
		if !reflect.DeepEqual(got, want[n.Object.Name]) {
			t.Errorf("node %s tier labels = %v, want %v", n.Object.Name, got, want[n.Object.Name])
		}
	}
}

// TestHyperNodeErrors: every problem names in.yaml, a line, the object and the field.
func TestHyperNodeErrors(t *testing.T) {
	nodes := docs(hnNodeYAML("n0", "{}"), hnNodeYAML("n1", "{}"))
	tests := []struct {
		name, input, kind, object, field, msg string
	}{
		{"tier below 1", hyperNodeYAML("h", 0, "", exactNode("n0")), "HyperNode", "h", "spec.tier", "must be 1 or more"},
		{"unknown member type", hyperNodeYAML("h", 1, "", "  - {type: Switch, selector: {exactMatch: {name: n0}}}\n"), "HyperNode", "h", "spec.members[0].type", `unknown member type "Switch"`},
		{"two selectors", hyperNodeYAML("h", 1, "", "  - {type: Node, selector: {exactMatch: {name: n0}, regexMatch: {pattern: n}}}\n"), "HyperNode", "h", "spec.members[0].selector", "exactly one of"},
		{"bad regex", hyperNodeYAML("h", 1, "", regexNode("n[")), "HyperNode", "h", "spec.members[0].selector.regexMatch.pattern", "invalid pattern"},
		{"labelMatch for a HyperNode", hyperNodeYAML("h", 2, "", "  - {type: HyperNode, selector: {labelMatch: {matchLabels: {a: b}}}}\n"), "HyperNode", "h", "spec.members[0].selector.labelMatch", "selects nodes only"},
		{"unknown field", hyperNodeYAML("h", 1, "", "  - {type: Node, selector: {exactMatch: {nam: n0}}}\n"), "HyperNode", "h", "spec.members[0].selector.exactMatch.nam", "unknown field"},
		{"dangling node", hyperNodeYAML("h", 1, "", exactNode("n9")), "HyperNode", "h", "spec.members[0].selector.exactMatch.name", `node "n9" not found`},
		{"dangling HyperNode", hyperNodeYAML("h", 2, "", exactHN("nope")), "HyperNode", "h", "spec.members[0].selector.exactMatch.name", `HyperNode "nope" not found`},
		{"cycle", docs(hyperNodeYAML("a", 2, "", exactHN("b")), hyperNodeYAML("b", 2, "", exactHN("a"))), "HyperNode", "b", "spec.members[0]", "cycle: a -> b -> a"},
		{"member of a higher tier", docs(hyperNodeYAML("a", 1, "", exactHN("b")), hyperNodeYAML("b", 2, "", exactNode("n0"))), "HyperNode", "a", "spec.members[0]", "must have a lower tier"},
		{"node in two HyperNodes of one tier", docs(hyperNodeYAML("a", 1, "", exactNode("n0")), hyperNodeYAML("b", 1, "", regexNode("^n"))), "HyperNode", "b", "spec.members", `node "n0" is also in HyperNode "a" of tier 1`},
		{"tier name on two tiers", docs(hyperNodeYAML("a", 1, "rack", exactNode("n0")), hyperNodeYAML("b", 2, "rack", exactHN("a"))), "HyperNode", "b", "spec.tierName", `"rack" is tier 1 in HyperNode "a"`},
		{"two names for one tier", docs(hyperNodeYAML("a", 1, "rack", exactNode("n0")), hyperNodeYAML("b", 1, "tor", exactNode("n1"))), "HyperNode", "b", "spec.tierName", `tier 1 is named "rack"`},
		{"namespaced", strings.Replace(hyperNodeYAML("h", 1, "", exactNode("n0")), "{name: h}", "{name: h, namespace: x}", 1), "HyperNode", "x/h", "metadata.namespace", "cluster-scoped"},
		{"unknown highestTierName", docs(hyperNodeYAML("h", 1, "rack", exactNode("n0")), vcJobYAML("bad", "", "  networkTopology: {highestTierName: spine}\n", taskYAML("w", 1, "cpu: 1", ""))), "Job", "ns/bad", "spec.networkTopology.highestTierName", `unknown tier "spine": the HyperNodes' tier names are rack`},
		{"PodGroup with both tier fields", "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg, namespace: ns}\nspec: {networkTopology: {highestTierAllowed: 1, highestTierName: rack}}\n", "PodGroup", "ns/pg", "spec.networkTopology.highestTierName", "not both"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			list := loadErrors(t, docs(volcanoSetup(), nodes, tc.input))
			for _, e := range list {
				if e.Field == tc.field && strings.Contains(e.Msg, tc.msg) {
					if e.Source.File != "in.yaml" || e.Source.Line == 0 || e.Kind != tc.kind || e.Name != tc.object {
						t.Errorf("problem %q does not name in.yaml:LINE and %s %s", e.Error(), tc.kind, tc.object)
					}
					return
				}
			}
			t.Errorf("no problem at %s with %q; got:\n%v", tc.field, tc.msg, list)
		})
	}
}

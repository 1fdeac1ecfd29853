package manifest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// liveObjects decodes HyperNode YAML documents as a client would return them.
func liveObjects(t *testing.T, docs ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

// TestResolveHyperNodesLikeTheLoader: HyperNodes read from a cluster resolve to the
// same HyperNodes and node tier labels as the same objects loaded from files.
func TestResolveHyperNodesLikeTheLoader(t *testing.T) {
	hns := []string{
		hyperNodeYAML("ra", 1, "rack", regexNode("^a")),
		hyperNodeYAML("rb", 1, "rack", "  - {type: Node, selector: {labelMatch: {matchLabels: {row: b}}}}\n"),
		hyperNodeYAML("spine", 2, "spine", exactHN("ra"), exactHN("rb")),
	}
	nodes := []string{hnNodeYAML("a0", "{}"), hnNodeYAML("a1", "{}"), hnNodeYAML("b0", "{row: b}"), hnNodeYAML("c0", "{}")}
	objs, err := LoadBytes("in.yaml", []byte(docs(append(append([]string{volcanoSetup()}, nodes...), hns...)...)))
	if err != nil {
		t.Fatal(err)
	}
	var live []NodeLabels
	wantLabels := map[string]map[string]string{}
	for _, n := range objs.Nodes {
		live = append(live, NodeLabels{Name: n.Object.Name, Labels: map[string]string{"row": n.Object.Labels["row"]}})
		tiers := map[string]string{}
		for k, v := range n.Object.Labels {
			if strings.HasPrefix(k, "topology.gantry.dev/hypernode-tier-") {
				tiers[k] = v
			}
		}
		if len(tiers) > 0 {
			wantLabels[n.Object.Name] = tiers
		}
	}
	got, err := ResolveHyperNodes("cluster", liveObjects(t, hns...), live)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Labels, wantLabels) {
		t.Errorf("tier labels %v, want the loader's %v", got.Labels, wantLabels)
	}
	strip := func(in []api.HyperNode) []api.HyperNode {
		out := append([]api.HyperNode(nil), in...)
		for i := range out {
			out[i].Source = api.Source{}
		}
		return out
	}
	if !reflect.DeepEqual(strip(got.HyperNodes), strip(objs.HyperNodes)) {
		t.Errorf("HyperNodes %+v, want the loader's %+v", got.HyperNodes, objs.HyperNodes)
	}
	if want := "rb"; got.Labels["b0"][api.HyperNodeTierLabel(1)] != want {
		t.Errorf("b0 tier 1 = %q, want %q (labelMatch)", got.Labels["b0"][api.HyperNodeTierLabel(1)], want)
	}
}

// TestResolveHyperNodesErrors: the loader's checks, naming the HyperNode and field;
// with a problem no labels are given. A field this version does not know is ignored.
func TestResolveHyperNodesErrors(t *testing.T) {
	nodes := []NodeLabels{{Name: "n0"}, {Name: "n1"}}
	tests := []struct {
		name, object, field, msg string
		docs                     []string
	}{
		{"dangling HyperNode", "s", "spec.members[0].selector.exactMatch.name", `HyperNode "nope" not found`,
			[]string{hyperNodeYAML("s", 2, "", exactHN("nope"))}},
		{"node in two of one tier", "b", "spec.members", `node "n0" is also in HyperNode "a"`,
			[]string{hyperNodeYAML("a", 1, "", exactNode("n0")), hyperNodeYAML("b", 1, "", regexNode("^n"))}},
		{"unknown field ignored", "", "", "",
			[]string{strings.Replace(hyperNodeYAML("a", 1, "", exactNode("n0")), "  tier: 1\n", "  tier: 1\n  futureField: x\n", 1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveHyperNodes("cluster", liveObjects(t, tc.docs...), nodes)
			if tc.msg == "" {
				if err != nil || got.Labels["n0"][api.HyperNodeTierLabel(1)] != "a" {
					t.Fatalf("got %v, %v; want n0 in a", got.Labels, err)
				}
				return
			}
			list, ok := err.(ErrorList)
			if !ok {
				t.Fatalf("err = %v, want an ErrorList", err)
			}
			for _, e := range list {
				if e.Kind == "HyperNode" && e.Name == tc.object && e.Field == tc.field && strings.Contains(e.Msg, tc.msg) {
					if got.Labels != nil {
						t.Errorf("labels %v given despite the problem", got.Labels)
					}
					return
				}
			}
			t.Errorf("no problem at HyperNode %s %s with %q; got %v", tc.object, tc.field, tc.msg, list)
		})
	}
}

package manifest

import (
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// rackScenario: racks ra = {a0, a1} and rb = {b0, b1} (HyperNodes of tier 1, "rack")
// under one spine (tier 2). A 10h filler job holds a0 and b1, so the free nodes a1 and
// b0 sit in different racks. train, submitted at 1m, asks for two 8-GPU pods with the
// given networkTopology. The nodes are v1 Nodes.
func rackScenario(trainTopology string) string {
	return rackScenarioOn(trainTopology, hnNodeYAML("a0", "{pin: filler}"), hnNodeYAML("a1", "{}"), hnNodeYAML("b0", "{}"), hnNodeYAML("b1", "{pin: filler}"))
}

// poolRackScenario is rackScenario on NodePool nodes: one single-node pool per node
// (pool a0 expands to node a0-0), so the HyperNodes' members come from NodePools.
func poolRackScenario(trainTopology string) string {
	pool := func(name, labels string) string {
		return "apiVersion: gantry.dev/v1alpha1\nkind: NodePool\nmetadata: {name: " + name + "}\n" +
			"spec: {count: 1, cpu: \"64\", memory: 512Gi, gpu: {model: NVIDIA-B200, perNode: 8}, labels: " + labels + "}\n"
	}
	return rackScenarioOn(trainTopology, pool("a0", "{pin: filler}"), pool("a1", "{}"), pool("b0", "{}"), pool("b1", "{pin: filler}"))
}

// rackScenarioOn is rackScenario on the given four nodes (or pools), named a0, a1, b0,
// b1 or with those prefixes, a0 and b1 labelled pin=filler.
func rackScenarioOn(trainTopology string, nodes ...string) string {
	pinned := taskYAML("f", 2, "nvidia.com/gpu: 8", "")
	pinned = strings.Replace(pinned, "      spec:\n", "      spec:\n        nodeSelector: {pin: filler}\n", 1)
	filler := strings.Replace(vcJobYAML("filler", "", "", pinned), "namespace: ns\n", "namespace: ns\n  annotations: {gantry.dev/duration: 10h}\n", 1)
	train := strings.Replace(vcJobYAML("train", "", trainTopology, taskYAML("w", 2, "nvidia.com/gpu: 8", "")),
		"namespace: ns\n", "namespace: ns\n  annotations: {gantry.dev/duration: 1h, gantry.dev/submit-at: 1m}\n", 1)
	return docs(volcanoSetup(), docs(nodes...),
		hyperNodeYAML("ra", 1, "rack", regexNode("^a")),
		hyperNodeYAML("rb", 1, "rack", regexNode("^b")),
		hyperNodeYAML("spine", 2, "spine", exactHN("ra"), exactHN("rb")),
		filler, train)
}

// trainPlaced runs the scenario and returns when train was placed and on which nodes.
func trainPlaced(t *testing.T, input string) (time.Duration, []string) {
	t.Helper()
	objs, err := LoadBytes("in.yaml", []byte(input))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(objs, sim.Options{Policy: engine.Policy{Seed: 1}, KeepLog: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	at := time.Duration(-1)
	for _, r := range s.Log() {
		if r.Event == sim.EvPlaced && r.Workload == "ns/train" {
			at = time.Duration(r.T)
			for _, p := range r.Pods {
				nodes = append(nodes, p.Node)
			}
		}
	}
	sort.Strings(nodes)
	return at, nodes
}

// TestSimulateHyperNodeTierName: a hard networkTopology with highestTierName "rack"
// keeps the gang inside one tier-1 HyperNode: it waits for the filler to end rather than
// take a1 and b0 across racks, which the spine tier allows at once.
func TestSimulateHyperNodeTierName(t *testing.T) {
	tests := []struct {
		name, topology string
		wantAt         time.Duration
		wantNodes      [][]string // any of
	}{
		{"rack", "  networkTopology: {mode: hard, highestTierName: rack}\n", 10 * time.Hour, [][]string{{"a0", "a1"}, {"b0", "b1"}}},
		{"spine", "  networkTopology: {mode: hard, highestTierName: spine}\n", time.Minute, [][]string{{"a1", "b0"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at, nodes := trainPlaced(t, rackScenario(tc.topology))
			ok := false
			for _, w := range tc.wantNodes {
				ok = ok || reflect.DeepEqual(nodes, w)
			}
			if at != tc.wantAt || !ok {
				t.Errorf("train placed at %s on %v, want at %s on one of %v", at, nodes, tc.wantAt, tc.wantNodes)
			}
		})
	}
}

// TestSimulateHyperNodePoolMembers: HyperNodes whose members are NodePool nodes bind them
// as they bind v1 Nodes: the same placements as TestSimulateHyperNodeTierName.
func TestSimulateHyperNodePoolMembers(t *testing.T) {
	tests := []struct {
		name, topology string
		wantAt         time.Duration
		wantNodes      [][]string // any of
	}{
		{"rack", "  networkTopology: {mode: hard, highestTierName: rack}\n", 10 * time.Hour, [][]string{{"a0-0", "a1-0"}, {"b0-0", "b1-0"}}},
		{"spine", "  networkTopology: {mode: hard, highestTierName: spine}\n", time.Minute, [][]string{{"a1-0", "b0-0"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at, nodes := trainPlaced(t, poolRackScenario(tc.topology))
			ok := false
			for _, w := range tc.wantNodes {
				ok = ok || reflect.DeepEqual(nodes, w)
			}
			if at != tc.wantAt || !ok {
				t.Errorf("train placed at %s on %v, want at %s on one of %v", at, nodes, tc.wantAt, tc.wantNodes)
			}
		})
	}
}

package manifest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// vcQueue is a Volcano Queue with the given spec (flow YAML, without braces).
func vcQueue(name, spec string) string {
	return "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: " + name + "}\nspec: {" + spec + "}\n"
}

// twoNodes is 2 nodes of 64 CPUs, 512Gi and 8 H100s each: 128 CPUs, 1Ti, 16 GPUs.
func twoNodes() string { return k8s.MakeNodePool("p", 2).GPUs("H100-SXM5-80GB", 8).YAML() }

// volcanoQuotaText renders the quota of the ClusterQueue or Cohort name, one resource
// after the other: "nvidia.com/gpu=4" and, when set, "<borrowing" and ">lending".
func volcanoQuotaText(objs *api.Objects, name string) string {
	var groups []api.ResourceGroup
	kind := ""
	for _, q := range objs.ClusterQueues {
		if q.Name == name {
			groups, kind = q.ResourceGroups, "cq"
		}
	}
	for _, c := range objs.Cohorts {
		if c.Name == name {
			groups, kind = c.ResourceGroups, "cohort"
		}
	}
	if kind == "" {
		return "missing"
	}
	var parts []string
	for _, g := range groups {
		for _, f := range g.Flavors {
			for _, r := range f.Resources {
				s := string(r.Name) + "=" + resources.Format(r.Name, r.Nominal)
				if r.BorrowingLimit != nil {
					s += "<" + resources.Format(r.Name, *r.BorrowingLimit)
				}
				if r.LendingLimit != nil {
					s += ">" + resources.Format(r.Name, *r.LendingLimit)
				}
				parts = append(parts, s)
			}
		}
	}
	return kind + " " + strings.Join(parts, " ")
}

func TestVolcanoWeightShares(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  map[string]string // queue -> volcanoQuotaText
	}{
		{
			name:  "weight-only siblings share every resource of the nodes by weight",
			input: docs(twoNodes(), vcQueue("a", "weight: 1"), vcQueue("b", "weight: 3")),
			want: map[string]string{
				"a": "cq cpu=32 memory=256Gi nvidia.com/gpu=4",
				"b": "cq cpu=96 memory=768Gi nvidia.com/gpu=12",
			},
		},
		{
			// GPU shares 4/4/8: a is capped at 2, and b and c share the 14 left 1:2 (4.67
			// and 9.33): floors 4 and 9, the unit left over to b, first by name. a covers
			// GPUs only, so b and c share the CPUs and memory 1:2 as well, to the milli-CPU
			// and the byte.
			name:  "a capability caps the share and the rest is shared again",
			input: docs(twoNodes(), vcQueue("c", "weight: 2"), vcQueue("a", "capability: {nvidia.com/gpu: 2}"), vcQueue("b", "weight: 1")),
			want: map[string]string{
				"a": "cq nvidia.com/gpu=2<0",
				"b": "cq cpu=42667m memory=366503875926 nvidia.com/gpu=5",
				"c": "cq cpu=85333m memory=733007751850 nvidia.com/gpu=9",
			},
		},
		{
			name:  "stated deserved is taken out before the weight siblings share",
			input: docs(twoNodes(), vcQueue("a", "deserved: {nvidia.com/gpu: 10}"), vcQueue("b", ""), vcQueue("c", "")),
			want: map[string]string{
				"a": "cq nvidia.com/gpu=10",
				"b": "cq cpu=64 memory=512Gi nvidia.com/gpu=3",
				"c": "cq cpu=64 memory=512Gi nvidia.com/gpu=3",
			},
		},
		{
			// Volcano's deployment example: the whole cluster by weight, capped at 2 CPUs.
			name:  "capability only, not reclaimable: its own quota up to the capability",
			input: docs(twoNodes(), vcQueue("test", "weight: 1, reclaimable: false, capability: {cpu: 2}")),
			want:  map[string]string{"test": "cq cpu=2<0"},
		},
		{
			// eng and sci get 8 GPUs each; eng's 8 go to prod and dev 3:1, so the Cohort
			// eng keeps none of its own: the subtree holds eng's share, not twice it.
			name: "hierarchy: a parent's share is split among its children",
			input: docs(twoNodes(), vcQueue("eng", "weight: 1"), vcQueue("sci", "weight: 1"),
				vcQueue("prod", "parent: eng, weight: 3"), vcQueue("dev", "parent: eng, weight: 1")),
			want: map[string]string{
				"eng":  "cohort cpu=0 memory=0 nvidia.com/gpu=0",
				"sci":  "cq cpu=64 memory=512Gi nvidia.com/gpu=8",
				"prod": "cq cpu=48 memory=384Gi nvidia.com/gpu=6",
				"dev":  "cq cpu=16 memory=128Gi nvidia.com/gpu=2",
			},
		},
		{
			// The children cover what the parent covers (GPUs) and need no nodes.
			name:  "weight-only children of a parent with deserved, without nodes",
			input: docs(vcQueue("research", "deserved: {nvidia.com/gpu: 8}, capability: {nvidia.com/gpu: 12}"), vcQueue("x", "parent: research"), vcQueue("y", "parent: research, weight: 3")),
			want: map[string]string{
				"research": "cohort nvidia.com/gpu=0<4",
				"x":        "cq nvidia.com/gpu=2",
				"y":        "cq nvidia.com/gpu=6",
			},
		},
		{
			name:  "stated quota only: as before, no nodes needed",
			input: docs(vcQueue("a", "deserved: {nvidia.com/gpu: 8}, capability: {nvidia.com/gpu: 12}, guarantee: {resource: {nvidia.com/gpu: 2}}")),
			want:  map[string]string{"a": "cq nvidia.com/gpu=8<4>6"},
		},
		{
			name:  "guarantee without deserved is the nominal quota, as before",
			input: docs(twoNodes(), vcQueue("a", "guarantee: {resource: {nvidia.com/gpu: 2}}"), vcQueue("b", "")),
			want: map[string]string{
				"a": "cq nvidia.com/gpu=2>0",
				"b": "cq cpu=128 memory=1Ti nvidia.com/gpu=14",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := LoadBytes("in.yaml", []byte(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			for q, want := range tt.want {
				if got := volcanoQuotaText(objs, q); got != want {
					t.Errorf("%s: %s, want %s", q, got, want)
				}
			}
		})
	}
}

// TestVolcanoWeightSharesNeedNodes: without nodes a share of the cluster is an error
// naming the file, line, Queue and field; quota stated in full needs none.
func TestVolcanoWeightSharesNeedNodes(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"weight only", vcQueue("a", "weight: 2"),
			"in.yaml:4: Queue a: spec.deserved: not set (nor guarantee or capability): Volcano gives such a queue a share of the cluster by its weight, and the inputs have no nodes: give the cluster's nodes (v1 Nodes or NodePools) with the queues, or set spec.deserved"},
		{"capability only", vcQueue("a", "capability: {cpu: 2, nvidia.com/gpu: 1}, deserved: {memory: 1Gi}"),
			"in.yaml:4: Queue a: spec.deserved: not set for cpu, nvidia.com/gpu: Volcano gives such a queue a share"},
		{"a parent that does not lead to root", vcQueue("a", "parent: nowhere"),
			`in.yaml:4: Queue a: spec.parent: parent "nowhere" does not lead to Volcano's root queue`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBytes("in.yaml", []byte(tt.input))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestConvertVolcanoQueuesWithNodes: `gantry convert`'s mapping shares the nodes it is
// given as Load does, and without them says that nodes are needed.
func TestConvertVolcanoQueuesWithNodes(t *testing.T) {
	queues := []VolcanoQueueDoc{{File: "q.yaml", Line: 1, Data: []byte(vcQueue("a", "weight: 1"))}, {File: "q.yaml", Line: 6, Data: []byte(vcQueue("b", "weight: 3"))}}
	nodes := []VolcanoQueueDoc{{File: "nodes.yaml", Line: 1, Data: []byte(twoNodes())}}
	conv, err := ConvertVolcanoQueuesWithNodes(queues, nodes)
	if err != nil {
		t.Fatal(err)
	}
	b := conv.Queues[1].ClusterQueue.Spec.ResourceGroups[0].Flavors[0].Resources
	if got := fmt.Sprintf("%s=%s", b[2].Name, b[2].NominalQuota.String()); got != "nvidia.com/gpu=12" {
		t.Errorf("b's GPU quota %s, want nvidia.com/gpu=12", got)
	}
	_, err = ConvertVolcanoQueues(queues)
	if want := "q.yaml:9: Queue b: spec.deserved: not set (nor guarantee or capability)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("without nodes: error %v, want one containing %q", err, want)
	}
	bad := []VolcanoQueueDoc{{File: "nodes.yaml", Line: 1, Data: []byte(vcQueue("c", ""))}}
	if _, err := ConvertVolcanoQueuesWithNodes(queues, bad); err == nil || !strings.Contains(err.Error(), "not a v1 Node or gantry.dev/v1alpha1 NodePool") {
		t.Errorf("a Queue given as a node: error %v", err)
	}
}

// TestVolcanoWeightSharesDeterministic: the shares do not depend on the order of the
// documents (remainders go by queue name) and are the same on every load.
func TestVolcanoWeightSharesDeterministic(t *testing.T) {
	qs := []string{vcQueue("a", "weight: 1"), vcQueue("b", "weight: 1"), vcQueue("c", "weight: 1, capability: {nvidia.com/gpu: 1}"), vcQueue("d", "weight: 1")}
	render := func(parts ...string) string {
		objs, err := LoadBytes("in.yaml", []byte(docs(append([]string{twoNodes()}, parts...)...)))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, q := range []string{"a", "b", "c", "d"} {
			out = append(out, q+": "+volcanoQuotaText(objs, q))
		}
		return strings.Join(out, "\n")
	}
	want := render(qs...)
	// 15 GPUs over a, b and d: 5 each; c covers GPUs only, so a, b and d share the CPUs
	// (42666.67 each): the two milli-CPUs left over go to a and b, first by name.
	if !strings.Contains(want, "a: cq cpu=42667m memory=366503875926 nvidia.com/gpu=5") || !strings.Contains(want, "d: cq cpu=42666m") {
		t.Fatalf("shares:\n%s", want)
	}
	for i := 0; i < 5; i++ {
		if got := render(qs[3], qs[1], qs[0], qs[2]); got != want {
			t.Fatalf("reordered documents give\n%s\nwant\n%s", got, want)
		}
	}
}

package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
)

// loadErrors loads one in-memory file and returns its problems.
func loadErrors(t *testing.T, input string) ErrorList {
	t.Helper()
	_, err := LoadBytes("in.yaml", []byte(input))
	if err == nil {
		return nil
	}
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error is %T, want ErrorList: %v", err, err)
	}
	return list
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		// want is the one problem expected: its line, kind, name and field exactly, and
		// a fragment of its message.
		wantLine  int
		wantKind  string
		wantName  string
		wantField string
		wantMsg   string
	}{
		{
			name:     "unknown kind",
			input:    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueu\nmetadata:\n  name: a\n",
			wantLine: 2, wantKind: "ClusterQueu", wantName: "a", wantField: "kind",
			wantMsg: `unknown kind "ClusterQueu" for apiVersion kueue.x-k8s.io/v1beta1`,
		},
		{
			name:     "known kind under a wrong apiVersion",
			input:    "apiVersion: kueue.x-k8s.io/v1alpha9\nkind: ClusterQueue\nmetadata:\n  name: a\n",
			wantLine: 1, wantKind: "ClusterQueue", wantName: "a", wantField: "apiVersion",
			wantMsg: "supported: kueue.x-k8s.io/v1beta1, gantry.dev/v1alpha1",
		},
		{
			name:     "missing apiVersion",
			input:    "kind: Job\nmetadata:\n  name: a\n",
			wantLine: 1, wantKind: "Job", wantName: "a", wantField: "apiVersion", wantMsg: "missing",
		},
		{
			name:     "unknown field, deep, with its own line",
			input:    docs(k8s.MakeFlavor("f").YAML(), k8s.MakeClusterQueue("a").Quota("f", "cpu", "4").YAML()+"      extra: 1\n"),
			wantLine: 18, wantKind: "ClusterQueue", wantName: "a",
			wantField: "spec.resourceGroups[0].flavors[0].extra", wantMsg: `unknown field "extra"`,
		},
		{
			name:     "wrong type",
			input:    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  parallelism: four\n",
			wantLine: 6, wantKind: "Job", wantName: "j", wantField: "spec.parallelism",
			wantMsg: `wrong type: expected an integer, got string "four"`,
		},
		{
			name:     "unparsable quantity",
			input:    docs(k8s.MakeFlavor("f").YAML(), k8s.MakeClusterQueue("a").Quota("f", "cpu", "lots").YAML()),
			wantLine: 17, wantKind: "ClusterQueue", wantName: "a",
			wantField: "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", wantMsg: `invalid value string "lots"`,
		},
		{
			name:     "negative quantity",
			input:    docs(k8s.MakeFlavor("f").YAML(), k8s.MakeClusterQueue("a").Quota("f", "cpu", "-2").YAML()),
			wantLine: 17, wantKind: "ClusterQueue", wantName: "a",
			wantField: "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", wantMsg: "is negative",
		},
		{
			name:     "fraction of an integer resource",
			input:    docs(k8s.MakeFlavor("f").YAML(), k8s.MakeClusterQueue("a").Quota("f", "nvidia.com/gpu", "1500m").YAML()),
			wantLine: 17, wantKind: "ClusterQueue", wantName: "a",
			wantField: "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", wantMsg: "must be a whole number",
		},
		{
			name:     "ClusterQueue names a missing flavor",
			input:    k8s.MakeClusterQueue("a").Quota("nope", "cpu", "4").YAML(),
			wantLine: 9, wantKind: "ClusterQueue", wantName: "a",
			wantField: "spec.resourceGroups[0].flavors[0].name", wantMsg: `ResourceFlavor "nope" not found`,
		},
		{
			name:     "flavor listed twice",
			input:    docs(k8s.MakeFlavor("f").YAML(), k8s.MakeClusterQueue("a").Quota("f", "cpu", "4").Quota("f", "memory", "4Gi").YAML()),
			wantLine: 20, wantKind: "ClusterQueue", wantName: "a",
			wantField: "spec.resourceGroups[1].flavors[0].name", wantMsg: `flavor "f" is listed twice`,
		},
		{
			name:     "resource covered twice",
			input:    docs(k8s.MakeFlavor("f").YAML(), k8s.MakeFlavor("g").YAML(), k8s.MakeClusterQueue("a").Quota("f", "cpu", "4").Quota("g", "cpu", "4").YAML()),
			wantLine: 23, wantKind: "ClusterQueue", wantName: "a",
			wantField: "spec.resourceGroups[1].coveredResources[0]", wantMsg: "already covered by resourceGroups[0]",
		},
		{
			name:     "borrowing limit without a cohort",
			input:    docs(k8s.MakeFlavor("f").YAML(), k8s.MakeClusterQueue("a").Quota("f", "cpu", "4").YAML()+"        borrowingLimit: 2\n"),
			wantLine: 18, wantKind: "ClusterQueue", wantName: "a",
			wantField: "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit", wantMsg: "without spec.cohort",
		},
		{
			name:     "LocalQueue names a missing ClusterQueue",
			input:    k8s.MakeLocalQueue("ns", "q", "ghost").YAML(),
			wantLine: 7, wantKind: "LocalQueue", wantName: "ns/q", wantField: "spec.clusterQueue",
			wantMsg: `ClusterQueue "ghost" not found`,
		},
		{
			name:     "pod mixes GPU request kinds",
			input:    docs(queueSetup(), k8s.MakeJob("ns", "j").KueueQueue("q").Limit("nvidia.com/gpu", "1").Limit("gantry.dev/gpu-milli", "500").YAML()),
			wantLine: 50, wantKind: "Job", wantName: "ns/j", wantField: "spec.template.spec.containers",
			wantMsg: "GPU request mixes",
		},
		{
			name:     "duplicate name",
			input:    docs(k8s.MakeFlavor("f").YAML(), k8s.MakeFlavor("f").YAML()),
			wantLine: 9, wantKind: "ResourceFlavor", wantName: "f", wantField: "metadata.name",
			wantMsg: `duplicate ResourceFlavor "f": already defined at in.yaml:1`,
		},
		{
			name: "cohort cycle",
			input: "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata:\n  name: a\nspec:\n  parentName: b\n---\n" +
				"apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata:\n  name: b\nspec:\n  parentName: a\n",
			wantLine: 6, wantKind: "Cohort", wantName: "a", wantField: "spec.parentName", wantMsg: "cohort cycle: a -> b -> a",
		},
		{
			name:     "workload queue missing",
			input:    docs(queueSetup(), k8s.MakeJob("ns", "j").KueueQueue("nope").Limit("nvidia.com/gpu", "1").YAML()),
			wantLine: 45, wantKind: "Job", wantName: "ns/j", wantField: "metadata.labels[kueue.x-k8s.io/queue-name]",
			wantMsg: `LocalQueue "nope" not found in namespace ns`,
		},
		{
			name:     "workload without queue",
			input:    docs(queueSetup(), k8s.MakeJob("ns", "j").Limit("nvidia.com/gpu", "1").YAML()),
			wantLine: 41, wantKind: "Job", wantName: "ns/j", wantField: "metadata.labels", wantMsg: "no queue",
		},
		{
			name:     "priority class missing",
			input:    docs(queueSetup(), k8s.MakeJob("ns", "j").KueueQueue("q").Priority("urgent").Limit("nvidia.com/gpu", "1").YAML()),
			wantLine: 45, wantKind: "Job", wantName: "ns/j", wantField: "metadata.labels[kueue.x-k8s.io/priority-class]",
			wantMsg: `WorkloadPriorityClass "urgent" not found`,
		},
		{
			name:     "bad duration",
			input:    docs(queueSetup(), k8s.MakeJob("ns", "j").KueueQueue("q").Annotate("gantry.dev/duration", "soon").Limit("nvidia.com/gpu", "1").YAML()),
			wantLine: 47, wantKind: "Job", wantName: "ns/j", wantField: "metadata.annotations[gantry.dev/duration]",
			wantMsg: `invalid duration "soon"`,
		},
		{
			name:     "MIG profile that exists on no model",
			input:    docs(queueSetup(), k8s.MakeJob("ns", "j").KueueQueue("q").Limit("nvidia.com/mig-9g.99gb", "1").YAML()),
			wantLine: 55, wantKind: "Job", wantName: "ns/j",
			wantField: "spec.template.spec.containers[0].resources.limits[nvidia.com/mig-9g.99gb]",
			wantMsg:   `MIG profile "9g.99gb" exists on no known GPU model`,
		},
		{
			name:     "MIG resource in NVIDIA's + spelling",
			input:    docs(queueSetup(), k8s.MakeJob("ns", "j").KueueQueue("q").Limit("nvidia.com/mig-1g.10gb+me", "1").YAML()),
			wantLine: 55, wantKind: "Job", wantName: "ns/j",
			wantField: "spec.template.spec.containers[0].resources.limits[nvidia.com/mig-1g.10gb+me]",
			wantMsg:   `nvidia.com/mig-1g.10gb+me is not a valid resource name: write nvidia.com/mig-1g.10gb.me`,
		},
		{
			name: "NodePool MIG profile unknown for its model",
			input: "apiVersion: gantry.dev/v1alpha1\nkind: NodePool\nmetadata:\n  name: p\nspec:\n  count: 1\n  cpu: \"8\"\n  memory: 64Gi\n" +
				"  gpu:\n    model: A100-SXM4-40GB\n    perNode: 8\n    sharing:\n      mode: mig\n      layout: all-1g.20gb\n",
			wantLine: 14, wantKind: "NodePool", wantName: "p", wantField: "spec.gpu.sharing.layout", wantMsg: "1g.20gb",
		},
		{
			name: "two job kinds make the same workload",
			input: docs(queueSetup(), k8s.MakeJob("ns", "w").KueueQueue("q").YAML(),
				"apiVersion: v1\nkind: Pod\nmetadata: {name: w, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\nspec: {containers: [{name: c, image: x}]}\n"),
			wantLine: 57, wantKind: "Pod", wantName: "ns/w", wantField: "metadata.name",
			wantMsg: `duplicate Workload "ns/w": already defined at in.yaml:39`,
		},
		{
			name:     "a document that is not an object",
			input:    "- just\n- a list\n",
			wantLine: 1, wantField: "", wantMsg: "expected an object with apiVersion and kind, got a list",
		},
		{
			name:  "invalid YAML",
			input: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n\tlabels: {}\n",
			// yaml.v3 reports the line where the broken mapping's context starts.
			wantLine: 4, wantMsg: "found a tab character",
		},
		{
			name:     "key repeated",
			input:    "apiVersion: v1\nkind: Namespace\nkind: Namespace\nmetadata:\n  name: a\n",
			wantLine: 3, wantMsg: `key "kind" appears twice`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := loadErrors(t, tt.input)
			if len(list) != 1 {
				t.Fatalf("got %d problems, want 1:\n%v", len(list), list)
			}
			e := list[0]
			if e.Source.File != "in.yaml" || e.Source.Line != tt.wantLine {
				t.Errorf("source = %s, want in.yaml:%d", e.Source, tt.wantLine)
			}
			if e.Kind != tt.wantKind || e.Name != tt.wantName || e.Field != tt.wantField {
				t.Errorf("kind/name/field = %q/%q/%q, want %q/%q/%q", e.Kind, e.Name, e.Field, tt.wantKind, tt.wantName, tt.wantField)
			}
			if !strings.Contains(e.Msg, tt.wantMsg) {
				t.Errorf("message %q does not contain %q", e.Msg, tt.wantMsg)
			}
		})
	}
}

// All problems of all documents are reported, in file and line order, one per line.
func TestLoadReportsEveryProblem(t *testing.T) {
	input := docs(
		k8s.MakeClusterQueue("a").Quota("ghost", "cpu", "-1").YAML(),
		k8s.MakeLocalQueue("ns", "q", "missing").YAML(),
		"apiVersion: v1\nkind: Widget\nmetadata:\n  name: s\n",
	)
	list := loadErrors(t, input)
	want := []string{
		"in.yaml:9: ClusterQueue a: spec.resourceGroups[0].flavors[0].name: ResourceFlavor \"ghost\" not found",
		"in.yaml:12: ClusterQueue a: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: quantity -1 is negative",
		"in.yaml:20: LocalQueue ns/q: spec.clusterQueue: ClusterQueue \"missing\" not found",
		"in.yaml:23: Widget s: kind: unknown kind \"Widget\" for apiVersion v1; supported: List, Namespace, Node, Pod",
	}
	if got := strings.Split(list.Error(), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// An unknown field is reported without hiding the object's other problems: a user fixing
// a file sees everything wrong with it in one run.
func TestUnknownFieldDoesNotHideOtherProblems(t *testing.T) {
	input := k8s.MakeClusterQueue("a").Quota("missing", "cpu", "-2").YAML() + "  colour: blue\n"
	_, err := LoadBytes("in.yaml", []byte(input))
	list, ok := err.(ErrorList)
	if !ok {
		t.Fatalf("err = %v (%T), want an ErrorList", err, err)
	}
	want := []string{`unknown field "colour"`, `ResourceFlavor "missing" not found`, "is negative"}
	for _, w := range want {
		found := false
		for _, e := range list {
			if strings.Contains(e.Error(), w) {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem mentions %q; got:\n%v", w, err)
		}
	}
}

// A LocalQueue in a namespace its ClusterQueue does not select loads, as Kueue allows
// it: its workloads wait with NamespaceNotSelected (the scheduler's queue layer says so)
// until the namespace's labels or the selector change.
func TestLocalQueueOutsideTheSelectorLoads(t *testing.T) {
	input := docs("apiVersion: v1\nkind: Namespace\nmetadata: {name: ns, labels: {tier: dev}}\n",
		k8s.MakeClusterQueue("cq").NamespaceSelector(map[string]string{"tier": "prod"}).YAML(), k8s.MakeLocalQueue("ns", "q", "cq").YAML())
	objs, err := LoadBytes("queues.yaml", []byte(input))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.LocalQueues) != 1 || objs.LocalQueues[0].ClusterQueue != "cq" {
		t.Fatalf("local queues %+v, want ns/q pointing at cq", objs.LocalQueues)
	}
}

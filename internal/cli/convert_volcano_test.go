package cli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/manifest"
)

// volcanoHierarchy is a Volcano queue hierarchy using every field the mapping reads: a
// parent queue (a Cohort), children with guarantee, capability, reclaimable and weight,
// a top-level queue, and a Kueue object in between that must keep its place.
const volcanoHierarchy = `apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research, labels: {team: ml}}
spec:
  weight: 3
  deserved: {nvidia.com/gpu: 16, cpu: "128"}
  capability: {nvidia.com/gpu: 24}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: ns}
spec: {clusterQueue: strict}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: strict}
spec:
  parent: research
  reclaimable: false
  deserved: {nvidia.com/gpu: 8, memory: 512Gi}
  guarantee: {resource: {nvidia.com/gpu: 2}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: loose}
spec:
  parent: research
  deserved: {nvidia.com/gpu: 4, cpu: 1500m}
  capability: {nvidia.com/gpu: 12, cpu: "8"}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: prod}
spec:
  weight: 2
  guarantee: {resource: {nvidia.com/gpu: 8}}
`

// queueObjects is the quota part of loaded objects with sources cleared (the converted
// objects are read from another file).
func queueObjects(objs *api.Objects) (cqs []api.ClusterQueue, cohorts []api.Cohort, flavors []api.ResourceFlavor) {
	for _, q := range objs.ClusterQueues {
		q.Source = api.Source{}
		cqs = append(cqs, q)
	}
	for _, c := range objs.Cohorts {
		c.Source = api.Source{}
		cohorts = append(cohorts, c)
	}
	for _, f := range objs.Flavors {
		f.Source = api.Source{}
		flavors = append(flavors, f)
	}
	return cqs, cohorts, flavors
}

// TestConvertVolcanoLoadsAsLoaderDerives: `gantry convert` writes, for Volcano queues,
// exactly the ClusterQueues, Cohorts and flavor that `validate` and `simulate` derive
// from the queues themselves; a Kueue document between them keeps its place.
func TestConvertVolcanoLoadsAsLoaderDerives(t *testing.T) {
	direct, err := manifest.LoadBytes("in.yaml", []byte(volcanoHierarchy))
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runConvert(t, volcanoHierarchy, "-f", "-")
	if code != 0 {
		t.Fatalf("convert: exit %d: %s", code, errOut)
	}
	want := []string{"Cohort research", "LocalQueue ns/lq", "ClusterQueue strict", "ClusterQueue loose", "ClusterQueue prod", "ResourceFlavor volcano-default"}
	if got := names(t, out); !reflect.DeepEqual(got, want) {
		t.Errorf("converted documents %q, want %q", got, want)
	}
	reloaded, err := manifest.LoadBytes("out.yaml", []byte(out))
	if err != nil {
		t.Fatalf("converted output does not load: %v\n%s", err, out)
	}
	dq, dc, df := queueObjects(direct)
	rq, rc, rf := queueObjects(reloaded)
	if !reflect.DeepEqual(dq, rq) {
		t.Errorf("ClusterQueues differ:\nloader:    %+v\nconverted: %+v", dq, rq)
	}
	if !reflect.DeepEqual(dc, rc) {
		t.Errorf("Cohorts differ:\nloader:    %+v\nconverted: %+v", dc, rc)
	}
	if !reflect.DeepEqual(df, rf) {
		t.Errorf("flavors differ:\nloader:    %+v\nconverted: %+v", df, rf)
	}
	// The mapping itself, so that equal-but-wrong on both sides fails too.
	if len(dq) != 3 || dq[0].Cohort != "research" || dq[2].Cohort != manifest.VolcanoRootCohort {
		t.Fatalf("cluster queues = %+v", dq)
	}
	gpu := dq[0].ResourceGroups[0].Flavors[0].Resources[1]
	if gpu.Name != "nvidia.com/gpu" || gpu.Nominal != 8 || gpu.BorrowingLimit == nil || *gpu.BorrowingLimit != 0 || gpu.LendingLimit == nil || *gpu.LendingLimit != 6 {
		t.Errorf("strict gpu quota = %+v, want nominal 8, borrowing 0 (not reclaimable), lending 6", gpu)
	}
	if f := dq[0].ResourceGroups[0].Flavors[0].Name; f != manifest.VolcanoFlavor {
		t.Errorf("flavor = %s, want %s", f, manifest.VolcanoFlavor)
	}
}

// TestConvertVolcanoFlavorGiven: a volcano-default flavor in the inputs is not written twice.
func TestConvertVolcanoFlavorGiven(t *testing.T) {
	in := "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: volcano-default}\nspec: {nodeLabels: {pool: a}}\n---\n" +
		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec: {deserved: {nvidia.com/gpu: 4}}\n"
	out, errOut, code := runConvert(t, in, "-f", "-")
	if code != 0 {
		t.Fatalf("convert: exit %d: %s", code, errOut)
	}
	if got, want := names(t, out), []string{"ResourceFlavor volcano-default", "ClusterQueue q"}; !reflect.DeepEqual(got, want) {
		t.Errorf("documents %q, want %q", got, want)
	}
	if _, err := manifest.LoadBytes("out.yaml", []byte(out)); err != nil {
		t.Errorf("converted output does not load: %v", err)
	}
}

// TestConvertVolcanoProblems: a bad Volcano Queue is reported as validate reports it
// (file, line, object, field), beside the problems of other documents, and nothing is
// written.
func TestConvertVolcanoProblems(t *testing.T) {
	in := "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: a}\nspec:\n  deserved: {nvidia.com/gpu: 4}\n  capabilty: {nvidia.com/gpu: 8}\n---\n" +
		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: b}\nspec:\n  deserved: {nvidia.com/gpu: 4}\n  capability: {nvidia.com/gpu: 2}\n"
	out, errOut, code := runConvert(t, in, "-f", "-")
	if code == 0 || out != "" {
		t.Fatalf("exit %d, stdout %q: want a failure and nothing written", code, out)
	}
	for _, want := range []string{
		`<stdin>:6: Queue a: spec.capabilty: unknown field "capabilty"`,
		"<stdin>:13: Queue b: spec.capability[nvidia.com/gpu]: capability 2 is below deserved 4",
		"2 problems found",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// volcanoWeightOnly is Volcano's default queue and a weighted sibling, with the two
// nodes whose capacity their weights share.
const volcanoWeightOnly = `apiVersion: v1
kind: Node
metadata: {name: n1, labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
status:
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8", pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
status:
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8", pods: "110"}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: default}
spec: {weight: 1, reclaimable: true}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec: {weight: 3}
`

// TestConvertVolcanoWeightShares: convert shares the capacity of the nodes among its
// inputs by weight, as the loader does, and says that nodes are needed without them.
func TestConvertVolcanoWeightShares(t *testing.T) {
	direct, err := manifest.LoadBytes("in.yaml", []byte(volcanoWeightOnly))
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runConvert(t, volcanoWeightOnly, "-f", "-")
	if code != 0 {
		t.Fatalf("convert: exit %d: %s", code, errOut)
	}
	reloaded, err := manifest.LoadBytes("out.yaml", []byte(out))
	if err != nil {
		t.Fatalf("converted output does not load: %v\n%s", err, out)
	}
	dq, _, _ := queueObjects(direct)
	rq, _, _ := queueObjects(reloaded)
	if !reflect.DeepEqual(dq, rq) {
		t.Errorf("ClusterQueues differ:\nloader:    %+v\nconverted: %+v", dq, rq)
	}
	gpus := map[string]int64{}
	for _, q := range rq {
		for _, r := range q.ResourceGroups[0].Flavors[0].Resources {
			if r.Name == "nvidia.com/gpu" {
				gpus[q.Name] = int64(r.Nominal)
			}
		}
	}
	if gpus["default"] != 4 || gpus["research"] != 12 {
		t.Errorf("GPU nominal quotas %v, want default 4 and research 12 (16 GPUs by weight 1:3)", gpus)
	}
	queuesOnly := volcanoWeightOnly[strings.Index(volcanoWeightOnly, "apiVersion: scheduling.volcano.sh"):]
	_, errOut, code = runConvert(t, queuesOnly, "-f", "-")
	if code == 0 || !strings.Contains(errOut, "node") {
		t.Errorf("convert of weight-only queues without nodes: exit %d, stderr %q; want an error that asks for the nodes", code, errOut)
	}
}

package manifest

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

// objectOf decodes YAML the way a Kubernetes client's unstructured decoding leaves it
// (integers as int64).
func objectOf(t *testing.T, doc string) map[string]any {
	t.Helper()
	var out map[string]any
	if err := yaml.Unmarshal([]byte(doc), &out); err != nil {
		t.Fatal(err)
	}
	return intsAsInt64(out).(map[string]any)
}

// intsAsInt64 turns the whole float64s of encoding/json into int64, as
// k8s.io/apimachinery's JSON decoding does for unstructured objects.
func intsAsInt64(x any) any {
	switch t := x.(type) {
	case map[string]any:
		for k, v := range t {
			t[k] = intsAsInt64(v)
		}
	case []any:
		for i, v := range t {
			t[i] = intsAsInt64(v)
		}
	case float64:
		if t == float64(int64(t)) {
			return int64(t)
		}
	}
	return x
}

// TestWorkloadOfObjectMatchesLoad: an already decoded object is read by the same
// reader as the file: same pod sets and gang, or the same error naming the field.
func TestWorkloadOfObjectMatchesLoad(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		// wantSets as podSetsText renders them; wantErr a part of the error.
		wantSets, wantErr string
	}{
		{name: "RayCluster", doc: `apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  headGroupSpec:
    template: {spec: {containers: [{name: h, image: ray, resources: {requests: {cpu: "1"}}}]}}
  workerGroupSpecs:
  - groupName: gpu
    minReplicas: 2
    numOfHosts: 2
    template: {spec: {containers: [{name: w, image: ray, resources: {limits: {nvidia.com/gpu: "4"}}}]}}
`, wantSets: "head:1/0:cpu=1 gpu:4/0:nvidia.com/gpu=4"},
		{name: "wrong type", doc: `apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns}
spec:
  parallelism: "four"
  template: {spec: {containers: [{name: c, image: i}]}}
`, wantErr: "Job ns/j: spec.parallelism: wrong type"},
		{name: "not a job", doc: `apiVersion: v1
kind: Node
metadata: {name: node-1}
`, wantErr: "Node node-1: kind: v1 Node is not a job kind"},
		{name: "unknown kind", doc: `apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: ns}
`, wantErr: "unsupported apiVersion/kind example.com/v1 Widget"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, err := WorkloadOfObject("cluster", objectOf(t, tc.doc))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := podSetsText(*w); got != tc.wantSets {
				t.Errorf("object: %s, want %s", got, tc.wantSets)
			}
			loaded := loadWorkloads(t, tc.doc)
			if len(loaded) != 1 || podSetsText(loaded[0]) != podSetsText(*w) {
				t.Errorf("Load made %v of the same document, the object reader %s", loaded, podSetsText(*w))
			}
		})
	}
}

// TestWorkloadOfJobTyped: a typed Job (no TypeMeta, as informers hand it over) reads
// as the same document does, its partial-admission annotation included.
func TestWorkloadOfJobTyped(t *testing.T) {
	job := k8s.MakeJob("ns", "j").KueueQueue("q").Pods(4).GPUs("2").Annotate(AnnotationJobMinParallelism, "3").Obj()
	job.TypeMeta = batchv1.Job{}.TypeMeta
	w, err := WorkloadOfJob("cluster", job)
	if err != nil {
		t.Fatal(err)
	}
	if got := podSetsText(*w); !strings.HasPrefix(got, "main:4/3:") || !strings.Contains(got, "nvidia.com/gpu=2") {
		t.Errorf("pod sets %s, want main:4/3 of 2 GPUs each", got)
	}
	if w.Queue != "q" || w.Owner.Kind != "Job" {
		t.Errorf("queue %q owner %+v, want q and the Job", w.Queue, w.Owner)
	}
}

// TestValueOfRefusesWhatJSONCannotHold: content no JSON decoding produces is an error,
// not a panic.
func TestValueOfRefusesWhatJSONCannotHold(t *testing.T) {
	obj := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "j"},
		"spec": map[string]any{"parallelism": struct{}{}}}
	if _, err := WorkloadOfObject("cluster", obj); err == nil || !strings.Contains(err.Error(), "unsupported value") {
		t.Fatalf("err = %v, want an unsupported value error", err)
	}
}

package controller

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// trainRuntimeObj is a runtime of kind (namespace ns for a TrainingRuntime) whose
// JobSet template has a dataset initializer and a trainer job "node" of numNodes pods
// asking for gpus GPUs each.
func trainRuntimeObj(kind, ns, name string, numNodes int64, gpus string) map[string]any {
	job := func(name, step, container string, gpus string) map[string]any {
		return map[string]any{"name": name, "template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"trainer.kubeflow.org/trainjob-ancestor-step": step}},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name": container, "image": "train", "resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": gpus}}}}}}}}}
	}
	md := map[string]any{"name": name}
	if kind == trainingRuntimeGVK.Kind {
		md["namespace"] = ns
	}
	return map[string]any{"apiVersion": trainJobGVK.GroupVersion().String(), "kind": kind, "metadata": md,
		"spec": map[string]any{"mlPolicy": map[string]any{"numNodes": numNodes, "torch": map[string]any{}},
			"template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{
				job("dataset-initializer", "dataset-initializer", "init", "0"), job("node", "trainer", "node", gpus)}}}}}
}

// trainJobObj is a TrainJob in namespace ns queued to LocalQueue q naming runtimeRef,
// with the trainer fields given (none when nil).
func trainJobObj(ns, name string, runtimeRef, trainer map[string]any) map[string]any {
	spec := map[string]any{"runtimeRef": runtimeRef}
	if trainer != nil {
		spec["trainer"] = trainer
	}
	return map[string]any{"apiVersion": trainJobGVK.GroupVersion().String(), "kind": "TrainJob",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{api.LabelKueueQueueName: "q"}},
		"spec":     spec}
}

// objectReader is a client.Reader over a fixed set of unstructured objects.
type objectReader map[string]map[string]any // by "Kind/namespace/name"

func (r objectReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	u := obj.(*unstructured.Unstructured)
	o, ok := r[u.GetKind()+"/"+key.Namespace+"/"+key.Name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: u.GroupVersionKind().Group, Resource: strings.ToLower(u.GetKind()) + "s"}, key.Name)
	}
	u.Object = runtimeJSON(o)
	return nil
}

func (objectReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("objectReader: List not supported")
}

// runtimeJSON round-trips obj through JSON, as an object read from the API server is.
func runtimeJSON(obj map[string]any) map[string]any {
	raw, _ := json.Marshal(obj)
	out := map[string]any{}
	_ = json.Unmarshal(raw, &out)
	return out
}

func readerOf(objs ...map[string]any) objectReader {
	r := objectReader{}
	for _, o := range objs {
		u := &unstructured.Unstructured{Object: o}
		r[u.GetKind()+"/"+u.GetNamespace()+"/"+u.GetName()] = o
	}
	return r
}

// TestTrainJobOneReader: a TrainJob converted as the controller does (its runtime read
// from the cluster) is the workload the loader makes of the same two objects in files;
// a runtime that is missing is a relatedMissingError naming it (the TrainJob waits);
// a reference the reader refuses is refused by field.
func TestTrainJobOneReader(t *testing.T) {
	ctr := trainRuntimeObj("ClusterTrainingRuntime", "", "torch", 2, "4")
	tr := trainRuntimeObj("TrainingRuntime", "ns", "local", 1, "8")
	otherNS := trainRuntimeObj("TrainingRuntime", "elsewhere", "local", 1, "8")
	cases := []struct {
		name    string
		job     map[string]any
		cluster []map[string]any
		// want is the pod sets as "name:count/gang"; wantMissing the runtime a
		// relatedMissingError names; wantErr a field the reader's error names.
		want, wantMissing, wantErr string
	}{
		{name: "ClusterTrainingRuntime by default, numNodes of the TrainJob",
			job:     trainJobObj("ns", "tj", map[string]any{"name": "torch"}, map[string]any{"numNodes": int64(3)}),
			cluster: []map[string]any{ctr}, want: "dataset-initializer:1/1 node:3/3"},
		{name: "TrainingRuntime of the TrainJob's namespace",
			job:     trainJobObj("ns", "tj", map[string]any{"name": "local", "kind": "TrainingRuntime"}, nil),
			cluster: []map[string]any{tr, ctr}, want: "dataset-initializer:1/1 node:1/1"},
		{name: "runtime missing",
			job:         trainJobObj("ns", "tj", map[string]any{"name": "torch"}, nil),
			wantMissing: `ClusterTrainingRuntime "torch"`},
		{name: "a TrainingRuntime of another namespace is not the TrainJob's",
			job:     trainJobObj("ns", "tj", map[string]any{"name": "local", "kind": "TrainingRuntime"}, nil),
			cluster: []map[string]any{otherNS}, wantMissing: `TrainingRuntime "local"`},
		{name: "a runtime kind Trainer does not have",
			job:     trainJobObj("ns", "tj", map[string]any{"name": "torch", "kind": "JobSet"}, nil),
			cluster: []map[string]any{ctr}, wantErr: "spec.runtimeRef.kind"},
		{name: "no runtime name",
			job:     trainJobObj("ns", "tj", map[string]any{}, nil),
			cluster: []map[string]any{ctr}, wantErr: "spec.runtimeRef.name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: runtimeJSON(tc.job)}
			wl, err := workloadForObject(context.Background(), readerOf(tc.cluster...), trainJobKind(), u)
			var missing *relatedMissingError
			switch {
			case tc.wantMissing != "":
				if !errors.As(err, &missing) || !strings.Contains(err.Error(), tc.wantMissing) {
					t.Fatalf("err = %v, want a relatedMissingError naming %s", err, tc.wantMissing)
				}
				return
			case tc.wantErr != "":
				if err == nil || errors.As(err, &missing) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want the reader's refusal naming %s", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			ctl, err := ToAPIWorkload(wl, 0)
			if err != nil {
				t.Fatal(err)
			}
			sim := trainJobFromFiles(t, append(tc.cluster, tc.job))
			sv, cv := viewOf(sim), viewOf(ctl)
			if got := cv.shape(); got != tc.want {
				t.Errorf("controller: %s, want %s", got, tc.want)
			}
			if !reflect.DeepEqual(sv, cv) {
				t.Errorf("the paths disagree:\nsimulator  %+v\ncontroller %+v", sv, cv)
			}
			if o := wl.Spec.Owner; o == nil || o.Kind != "TrainJob" || o.APIVersion != "trainer.kubeflow.org/v1alpha1" || wl.Name != "trainjob-tj" {
				t.Errorf("workload %s owner %+v, want trainjob-tj owned by the TrainJob", wl.Name, o)
			}
		})
	}
}

// trainJobFromFiles loads the objects with a queue setup, as `gantry simulate` reads
// files, and returns the one workload.
func trainJobFromFiles(t *testing.T, objs []map[string]any) *api.Workload {
	t.Helper()
	parts := []string{k8s.MakeFlavor("f").YAML(), k8s.MakeClusterQueue("cq").Quota("f", "nvidia.com/gpu", "64").YAML(),
		k8s.MakeLocalQueue("ns", "q", "cq").YAML()}
	for _, o := range objs {
		raw, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, string(raw))
	}
	loaded, err := manifest.LoadBytes("in.yaml", []byte(strings.Join(parts, "---\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Workloads) != 1 {
		t.Fatalf("%d workloads from files, want 1", len(loaded.Workloads))
	}
	return &loaded.Workloads[0]
}

// TestTrainJobPodsMatchTheReadersPodSets: a pod of the JobSet Trainer makes for a
// TrainJob is found under the TrainJob's name and matched to the pod set of its
// replicated job.
func TestTrainJobPodsMatchTheReadersPodSets(t *testing.T) {
	k := trainJobKind()
	label, podSetOf := podLabelOf("TrainJob")
	if label != jobSetNameLabel {
		t.Errorf("TrainJob pod label %q, want %q (Trainer's JobSet is named after the TrainJob)", label, jobSetNameLabel)
	}
	u := &unstructured.Unstructured{Object: runtimeJSON(trainJobObj("ns", "tj", map[string]any{"name": "torch"}, nil))}
	wl, err := workloadForObject(context.Background(), readerOf(trainRuntimeObj("ClusterTrainingRuntime", "", "torch", 2, "1")), k, u)
	if err != nil {
		t.Fatal(err)
	}
	for _, rj := range []string{"dataset-initializer", "node"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{jobSetNameLabel: "tj", jobSetReplicatedJobLabel: rj}}}
		got := podSetOf(p)
		found := false
		for _, ps := range wl.Spec.PodSets {
			found = found || ps.Name == got
		}
		if got != rj || !found {
			t.Errorf("pod of replicated job %s: pod set %q, want %q among the workload's", rj, got, rj)
		}
	}
}

// TestTrainJobFinished: Trainer's Complete and Failed conditions end the TrainJob;
// Suspended does not.
func TestTrainJobFinished(t *testing.T) {
	cases := []struct {
		cond               string
		wantDone, wantFail bool
	}{
		{"Suspended", false, false},
		{"Complete", true, false},
		{"Failed", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.cond, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
				map[string]any{"type": tc.cond, "status": "True"}}}}}
			done, failed := trainJobKind().Finished(u)
			if done != tc.wantDone || failed != tc.wantFail {
				t.Errorf("done, failed = %v, %v; want %v, %v", done, failed, tc.wantDone, tc.wantFail)
			}
		})
	}
}

// TestTrainJobBindsPodSetsAsTheyAppear: a TrainJob's trainer pods appear only after its
// initializers finish, so the pod sets that have pods are bound on their own; the rest
// of the slots wait (still reserved by the admission).
func TestTrainJobBindsPodSetsAsTheyAppear(t *testing.T) {
	pls := []v1alpha1.PodPlacement{
		{PodSet: "dataset-initializer", Index: 0, Node: "n0"},
		{PodSet: "node", Index: 0, Node: "n1"},
		{PodSet: "node", Index: 1, Node: "n2"},
	}
	setOf := func(p *corev1.Pod) string { return p.Labels["set"] }
	pod := func(name, set string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"set": set}}}
	}
	got := bindablePlacements(KindTrainJob, pls, []*corev1.Pod{pod("init-0", "dataset-initializer")}, setOf)
	if len(got) != 1 || got[0].PodSet != "dataset-initializer" {
		t.Fatalf("with only the initializer's pod: %v, want its slot alone", got)
	}
	if bs := MatchGang(got, []*corev1.Pod{pod("init-0", "dataset-initializer")}, setOf); len(bs) != 1 {
		t.Errorf("the initializer is not bound on its own: %d bindings", len(bs))
	}
	all := []*corev1.Pod{pod("init-0", "dataset-initializer"), pod("node-0", "node"), pod("node-1", "node")}
	if got := bindablePlacements(KindTrainJob, pls, all, setOf); len(got) != 3 {
		t.Errorf("with every pod: %d slots, want 3", len(got))
	}
	if got := bindablePlacements("Job", pls, all[:1], setOf); len(got) != 3 {
		t.Errorf("another kind's gang is not cut: %d slots, want 3", len(got))
	}
}

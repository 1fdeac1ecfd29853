package controller

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/internal/testing/upstream"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// installTrainerCRDs installs Kubeflow Trainer v2.0's own CRDs (TrainJob,
// TrainingRuntime, ClusterTrainingRuntime), read from its module.
func (f *fixture) installTrainerCRDs() {
	f.t.Helper()
	dir := filepath.Join(upstream.ModuleDir(f.t, "github.com/kubeflow/trainer/v2", "v2.0.0"), "manifests", "base", "crds")
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, name := range []string{"trainjobs", "trainingruntimes", "clustertrainingruntimes"} {
		data, err := os.ReadFile(filepath.Join(dir, "trainer.kubeflow.org_"+name+".yaml"))
		if err != nil {
			f.t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			f.t.Fatalf("%s: %v", name, err)
		}
		crds = append(crds, crd)
	}
	if err := testEnv.CreateCRDs(f.ctx, crds...); err != nil {
		f.t.Fatal(err)
	}
}

// TestTrainJobQueuedThenBound plays Kubeflow Trainer against the real API server with
// Trainer's CRDs: a TrainJob naming a ClusterTrainingRuntime that does not exist yet is
// held suspended with a Warning event naming the runtime and gets no Workload; once the
// runtime is created (its watch wakes a pass) the TrainJob gets its Workload, is
// admitted and unsuspended; the pods of the JobSet Trainer would make (played here) are
// bound whole; the TrainJob's Complete condition finishes the Workload.
func TestTrainJobQueuedThenBound(t *testing.T) {
	f := newFixture(t)
	f.installTrainerCRDs()
	if err := testEnv.CreateCRDs(f.ctx, minimalCRD("jobset.x-k8s.io", "v1alpha2", "JobSet")); err != nil {
		t.Fatal(err)
	}
	f.create(k8s.MakeNode("tj-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("tj-cq").Quota("h100", "nvidia.com/gpu", "4").Obj(), k8s.MakeLocalQueue("", "lq", "tj-cq").Obj())
	f.startController()

	runtimeName := "gantry-test-" + f.ns // cluster-scoped: one per test namespace
	tj := &unstructured.Unstructured{Object: trainJobObj(f.ns, "tj", map[string]any{"name": runtimeName}, map[string]any{"numNodes": int64(2)})}
	tj.SetLabels(map[string]string{"gantry.dev/queue-name": "lq"})
	if err := f.c.Create(f.ctx, tj); err != nil {
		t.Fatal(err)
	}
	get := func() *unstructured.Unstructured { return f.object(trainJobGVK, "tj") }
	suspended := func() bool {
		s, _, _ := unstructured.NestedBool(get().Object, "spec", "suspend")
		return s
	}
	f.eventually(20*time.Second, "a TrainJob without its runtime held with a Warning naming it", func() (bool, string) {
		return suspended() && f.hasEvent("tj", ReasonRuntimeNotFound, `ClusterTrainingRuntime "`+runtimeName+`" not found`), "suspended: " + boolText(suspended())
	})
	if wl := f.workload("trainjob-tj"); wl != nil {
		t.Fatalf("a TrainJob without its runtime has a Workload: %+v", wl.Spec)
	}

	rt := &unstructured.Unstructured{Object: trainRuntimeObj("ClusterTrainingRuntime", "", runtimeName, 1, "2")}
	if err := f.c.Create(f.ctx, rt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.c.Delete(f.ctx, rt) })
	f.eventually(20*time.Second, "TrainJob admitted and unsuspended once its runtime exists", func() (bool, string) {
		wl := f.workload("trainjob-tj")
		if wl == nil {
			return false, "no workload"
		}
		return wl.Status.Admission != nil && !suspended(), string(wl.Status.State) + ": " + wl.Status.Message
	})
	wl := f.workload("trainjob-tj")
	if got := podSetCounts(wl); got["node"] != 2 || got["dataset-initializer"] != 1 {
		t.Errorf("pod sets %v, want node:2 (the TrainJob's numNodes) and dataset-initializer:1", got)
	}

	// Trainer's JobSet "tj", owned by the TrainJob: not queued on its own, even with
	// the queue label copied down (from the TrainJob's spec.labels). It runs its
	// replicated jobs' pods; the trainer job's two nodes take two GPUs each.
	js := jobSetObj(f.ns, replicatedJob("node", 1, 2, "2"))
	js.SetName("tj")
	js.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: trainJobGVK.GroupVersion().String(), Kind: "TrainJob",
		Name: "tj", UID: get().GetUID(), Controller: ptr.To(true)}})
	if err := f.c.Create(f.ctx, js); err != nil {
		t.Fatal(err)
	}
	gpu := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}
	pods := map[string]string{"tj-dataset-initializer-0-0": "dataset-initializer", "tj-node-0-0": "node", "tj-node-0-1": "node"}
	var names []string
	for name, rj := range pods {
		p := k8s.MakePod("", name).Obj()
		p.Labels = map[string]string{jobSetNameLabel: "tj", jobSetReplicatedJobLabel: rj}
		if rj == "node" {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: gpu, Limits: gpu}
		}
		f.create(p)
		names = append(names, name)
	}
	f.eventually(20*time.Second, "TrainJob pods bound", func() (bool, string) {
		n, desc := f.podsBound(names...)
		return n == len(names), desc
	})
	f.assertNoDeviceSharedTwice()
	if wl := f.workload("jobset-tj"); wl != nil {
		t.Errorf("the TrainJob's JobSet was queued on its own: %+v", wl.Spec)
	}

	u := get()
	cond := map[string]any{"type": "Complete", "status": "True", "reason": "JobsCompleted", "message": "done",
		"lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)}
	if err := unstructured.SetNestedSlice(u.Object, []any{cond}, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Status().Update(f.ctx, u); err != nil {
		t.Fatal(err)
	}
	f.eventually(20*time.Second, "TrainJob workload finished", func() (bool, string) {
		wl := f.workload("trainjob-tj")
		return meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished), string(wl.Status.State)
	})
}

// podSetCounts is a Workload's pod counts by pod set.
func podSetCounts(wl *v1alpha1.Workload) map[string]int32 {
	out := map[string]int32{}
	for _, ps := range podSetsOf(wl) {
		out[ps.Name] = ps.Count
	}
	return out
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestTrainJobFollowsItsRuntimeWhilePending: a TrainJob whose runtime asks for more
// than the queue's quota waits; when the runtime changes (fewer nodes) its pending
// Workload is made again with the runtime's new pods and admitted. The TrainJob itself
// does not change: the runtime's watch wakes the pass.
func TestTrainJobFollowsItsRuntimeWhilePending(t *testing.T) {
	f := newFixture(t)
	f.installTrainerCRDs()
	f.create(k8s.MakeNode("tjr-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("tjr-cq").Quota("h100", "nvidia.com/gpu", "4").Obj(), k8s.MakeLocalQueue("", "lq", "tjr-cq").Obj())
	rt := &unstructured.Unstructured{Object: trainRuntimeObj("TrainingRuntime", f.ns, "local", 3, "2")}
	if err := f.c.Create(f.ctx, rt); err != nil {
		t.Fatal(err)
	}
	f.startController()
	tj := &unstructured.Unstructured{Object: trainJobObj(f.ns, "tj", map[string]any{"name": "local", "kind": "TrainingRuntime"}, nil)}
	tj.SetLabels(map[string]string{"gantry.dev/queue-name": "lq"})
	if err := f.c.Create(f.ctx, tj); err != nil {
		t.Fatal(err)
	}
	f.eventually(20*time.Second, "three nodes of two GPUs wait on a quota of four", func() (bool, string) {
		wl := f.workload("trainjob-tj")
		if wl == nil {
			return false, "no workload"
		}
		return podSetCounts(wl)["node"] == 3 && wl.Status.Admission == nil && wl.Status.Message != "", string(wl.Status.State) + ": " + wl.Status.Message
	})

	rt.SetGroupVersionKind(trainingRuntimeGVK)
	if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(rt), rt); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(rt.Object, int64(2), "spec", "mlPolicy", "numNodes"); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Update(f.ctx, rt); err != nil {
		t.Fatal(err)
	}
	f.eventually(20*time.Second, "the Workload made again with the runtime's two nodes, admitted", func() (bool, string) {
		wl := f.workload("trainjob-tj")
		if wl == nil {
			return false, "no workload"
		}
		return podSetCounts(wl)["node"] == 2 && wl.Status.Admission != nil, fmt.Sprintf("%v %s: %s", podSetCounts(wl), wl.Status.State, wl.Status.Message)
	})
}

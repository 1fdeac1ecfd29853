package controller

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestMPIJobV1SuspendedUntilAdmittedThenBound: the training-operator's kubeflow.org/v1
// MPIJob (mpijobs.kubeflow.org served as v1) is queued like its other kinds: created
// running, it is suspended (runPolicy.suspend) until its launcher and workers are
// admitted as one gang, its pods (played here for the operator) are bound, and its
// Succeeded condition finishes the Workload.
func TestMPIJobV1SuspendedUntilAdmittedThenBound(t *testing.T) {
	f := newFixture(t)
	if err := testEnv.CreateCRDs(f.ctx, minimalCRD("kubeflow.org", "v1", "MPIJob")); err != nil {
		t.Fatal(err)
	}
	f.create(k8s.MakeNode("mpi-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("mpi-cq").Quota("h100", "nvidia.com/gpu", "4").Obj(), k8s.MakeLocalQueue("", "lq", "mpi-cq").Obj())
	f.startController()
	replica := func(n int64, gpus string) map[string]any {
		return map[string]any{"replicas": n, "template": rayPodTemplate(map[string]any{"nvidia.com/gpu": gpus}, map[string]any{"nvidia.com/gpu": gpus})}
	}
	mj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeflow.org/v1", "kind": "MPIJob",
		"metadata": map[string]any{"name": "mj", "namespace": f.ns, "labels": map[string]any{"gantry.dev/queue-name": "lq"}},
		"spec": map[string]any{"runPolicy": map[string]any{"suspend": false},
			"mpiReplicaSpecs": map[string]any{"Launcher": replica(1, "0"), "Worker": replica(2, "2")}},
	}}
	if err := f.c.Create(f.ctx, mj); err != nil {
		t.Fatal(err)
	}
	get := func() *unstructured.Unstructured { return f.object(mj.GroupVersionKind(), "mj") }
	f.waitResumed("MPIJob", mj.GroupVersionKind(), "mj", "mpijob-mj", "spec", "runPolicy", "suspend")
	if o := f.workload("mpijob-mj").Spec.Owner; o == nil || o.APIVersion != "kubeflow.org/v1" {
		t.Errorf("workload owner %+v, want the kubeflow.org/v1 MPIJob", o)
	}
	gpu := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}
	pods := map[string]string{"mj-launcher": "launcher", "mj-worker-0": "worker", "mj-worker-1": "worker"}
	var names []string
	for name, role := range pods {
		p := k8s.MakePod("", name).Obj()
		p.Labels = map[string]string{"training.kubeflow.org/job-name": "mj", "training.kubeflow.org/replica-type": role}
		if role == "worker" {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: gpu, Limits: gpu}
		}
		f.create(p)
		names = append(names, name)
	}
	f.eventually(20*time.Second, "MPIJob pods bound", func() (bool, string) {
		n, desc := f.podsBound(names...)
		return n == len(names), desc
	})
	f.assertNoDeviceSharedTwice()
	u := get()
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Succeeded", "status": "True"}}, "status", "conditions")
	if err := f.c.Update(f.ctx, u); err != nil {
		t.Fatal(err)
	}
	f.eventually(20*time.Second, "MPIJob workload finished", func() (bool, string) {
		wl := f.workload("mpijob-mj")
		return meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished), string(wl.Status.State)
	})
}

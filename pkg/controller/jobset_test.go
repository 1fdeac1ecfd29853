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

// jobSetObj is a JobSet whose replicated jobs are given as name → {replicas, parallelism}.
func jobSetObj(ns string, jobs ...map[string]any) *unstructured.Unstructured {
	rjs := make([]any, len(jobs))
	for i, j := range jobs {
		rjs[i] = j
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
		"metadata": map[string]any{"name": "js", "namespace": ns, "labels": map[string]any{"gantry.dev/queue-name": "lq"}},
		"spec":     map[string]any{"replicatedJobs": rjs},
	}}
}

func replicatedJob(name string, replicas, parallelism int64, gpus string) map[string]any {
	return map[string]any{"name": name, "replicas": replicas, "template": map[string]any{"spec": map[string]any{
		"parallelism": parallelism, "completions": parallelism,
		"template": rayPodTemplate(map[string]any{"nvidia.com/gpu": gpus}, map[string]any{"nvidia.com/gpu": gpus})}}}
}

// TestJobSetPodSets: each replicated job is a pod set of replicas × parallelism pods.
func TestJobSetPodSets(t *testing.T) {
	cases := []struct {
		name    string
		obj     *unstructured.Unstructured
		want    map[string]int32 // pod set -> count
		wantErr bool             // the JobSet cannot be represented
	}{
		{name: "two groups", obj: jobSetObj("ns", replicatedJob("driver", 1, 1, "1"), replicatedJob("workers", 2, 4, "2")),
			want: map[string]int32{"driver": 1, "workers": 8}},
		{name: "no replicated jobs", obj: jobSetObj("ns"), wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wl, err := WorkloadForObject(kindNamed(t, "JobSet"), tc.obj)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			got := map[string]int32{}
			for _, ps := range podSetsOf(wl) {
				got[ps.Name] = ps.Count
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("pod set %s count = %d, want %d (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}

// TestJobSetSuspendedUntilAdmittedThenBound: a JobSet created running is suspended by
// Gantry, unsuspended on admission; its pods (played here for the JobSet controller)
// are bound as one gang; a Completed condition finishes its Workload.
func TestJobSetSuspendedUntilAdmittedThenBound(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("js-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("js-cq").Quota("h100", "nvidia.com/gpu", "4").Obj(), k8s.MakeLocalQueue("", "lq", "js-cq").Obj())
	if err := testEnv.CreateCRDs(f.ctx, minimalCRD("jobset.x-k8s.io", "v1alpha2", "JobSet")); err != nil {
		t.Fatal(err)
	}
	f.startController()
	js := jobSetObj(f.ns, replicatedJob("workers", 2, 1, "2"))
	if err := f.c.Create(f.ctx, js); err != nil {
		t.Fatal(err)
	}
	get := func() *unstructured.Unstructured { return f.object(js.GroupVersionKind(), "js") }
	f.waitResumed("JobSet", js.GroupVersionKind(), "js", "jobset-js", "spec", "suspend")
	gpu := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}
	for _, n := range []string{"js-workers-0-0", "js-workers-1-0"} {
		p := k8s.MakePod("", n).Obj()
		p.Labels = map[string]string{"jobset.sigs.k8s.io/jobset-name": "js", "jobset.sigs.k8s.io/replicatedjob-name": "workers"}
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: gpu, Limits: gpu}
		f.create(p)
	}
	f.eventually(20*time.Second, "JobSet pods bound", func() (bool, string) {
		n, desc := f.podsBound("js-workers-0-0", "js-workers-1-0")
		return n == 2, desc
	})
	f.assertNoDeviceSharedTwice()
	u := get()
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Completed", "status": "True"}}, "status", "conditions")
	if err := f.c.Update(f.ctx, u); err != nil {
		t.Fatal(err)
	}
	f.eventually(20*time.Second, "JobSet workload finished", func() (bool, string) {
		wl := f.workload("jobset-js")
		return meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished), string(wl.Status.State)
	})
}

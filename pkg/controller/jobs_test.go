package controller

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func TestWorkloadForJob(t *testing.T) {
	cases := []struct {
		name string
		job  *k8s.JobWrapper
		// wantQueue, wantCount: the workload's queue and pod count; wantErr: a substring
		// of the error when the job cannot be represented.
		wantQueue string
		wantCount int32
		wantErr   string
	}{
		{name: "gantry label", job: k8s.MakeJob("ns", "a").Queue("q").Pods(4), wantQueue: "q", wantCount: 4},
		{name: "kueue label", job: k8s.MakeJob("ns", "a").KueueQueue("kq").Pods(2), wantQueue: "kq", wantCount: 2},
		{name: "no label", job: k8s.MakeJob("ns", "a"), wantErr: "Job ns/a: metadata.labels: no gantry.dev/queue-name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wl, err := WorkloadForJob(tc.job.Obj())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if wl.Spec.QueueName != tc.wantQueue || wl.Spec.PodSets[0].Count != tc.wantCount {
				t.Errorf("queue %q count %d, want %q %d", wl.Spec.QueueName, wl.Spec.PodSets[0].Count, tc.wantQueue, tc.wantCount)
			}
			if wl.Name != "job-a" || wl.OwnerReferences[0].Kind != "Job" || !ptr.Deref(wl.OwnerReferences[0].Controller, false) {
				t.Errorf("workload %s owner %+v: want job-a controlled by the Job", wl.Name, wl.OwnerReferences)
			}
		})
	}
}

// TestWorkloadForJobCountAndLimits: completions below parallelism caps the gang, GPU
// limits count as requests, and the max-exec-time label is carried over.
func TestWorkloadForJobCountAndLimits(t *testing.T) {
	job := k8s.MakeJob("ns", "a").Queue("q").Pods(8).GPUs("2").Obj()
	job.Spec.Completions = ptr.To[int32](3)
	job.Labels[api.LabelKueueMaxExecTime] = "3600"
	wl, err := WorkloadForJob(job)
	if err != nil {
		t.Fatal(err)
	}
	ps := wl.Spec.PodSets[0]
	if ps.Count != 3 {
		t.Errorf("count = %d, want 3 (completions)", ps.Count)
	}
	if q := ps.Requests["nvidia.com/gpu"]; q.Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("GPU request = %s, want 2 (from the limit)", q.String())
	}
	if ptr.Deref(wl.Spec.MaximumExecutionTimeSeconds, 0) != 3600 {
		t.Errorf("max exec time = %v, want 3600", wl.Spec.MaximumExecutionTimeSeconds)
	}
	job.Labels[api.LabelKueueMaxExecTime] = "soon"
	if _, err := WorkloadForJob(job); err == nil || !strings.Contains(err.Error(), api.LabelKueueMaxExecTime) {
		t.Errorf("bad max exec time: err = %v, want one naming the label", err)
	}
}

func TestPodRequests(t *testing.T) {
	q := resource.MustParse
	always := corev1.ContainerRestartPolicyAlways
	cases := []struct {
		name string
		spec corev1.PodSpec
		// want is the per-pod charge.
		want corev1.ResourceList
	}{{
		name: "containers summed, limits stand in for missing requests",
		spec: corev1.PodSpec{Containers: []corev1.Container{
			{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("1")}}},
			{Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("500m"), "nvidia.com/gpu": q("1")}}},
		}},
		want: corev1.ResourceList{"cpu": q("1500m"), "nvidia.com/gpu": q("1")},
	}, {
		name: "a larger init container wins",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("4")}}}},
			Containers:     []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("1")}}}},
		},
		want: corev1.ResourceList{"cpu": q("4")},
	}, {
		name: "sidecars add to the containers, overhead on top",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("1")}}}},
			Containers:     []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("2")}}}},
			Overhead:       corev1.ResourceList{"cpu": q("100m")},
		},
		want: corev1.ResourceList{"cpu": q("3100m")},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := PodRequests(&tc.spec)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for n, w := range tc.want {
				if g := got[n]; g.Cmp(w) != 0 {
					t.Errorf("%s = %s, want %s", n, g.String(), w.String())
				}
			}
		})
	}
}

package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestGroupPodGangs: gang pods are grouped by namespace, kind and name, live and ended
// pods apart; pods of other schedulers or without a gang are ignored.
func TestGroupPodGangs(t *testing.T) {
	other := k8s.MakePod("", "other").Gang("a", "2").Obj()
	other.Spec.SchedulerName = "default-scheduler"
	pods := []*corev1.Pod{
		k8s.MakePod("", "a-1").Gang("a", "2").Obj(), k8s.MakePod("", "a-0").Gang("a", "2").Phase(corev1.PodFailed).Obj(),
		k8s.MakePod("", "v-0").PodGroup("a").Obj(), k8s.MakePod("", "solo").Obj(), other,
	}
	got := groupPodGangs(pods)
	// want: gang "a" (PodGang) with one live pod and one failed; PodGroup "a" apart.
	if len(got) != 2 {
		t.Fatalf("got %d gangs, want 2", len(got))
	}
	g, v := got[0], got[1]
	if g.kind != KindPodGang || len(g.live) != 1 || len(g.done) != 1 || !g.failed {
		t.Errorf("gang a = %s live %d done %d failed %v; want PodGang, 1 live, 1 done, failed", g.kind, len(g.live), len(g.done), g.failed)
	}
	if v.kind != KindPodGroup || len(v.live) != 1 {
		t.Errorf("podgroup a = %s live %d; want PodGroup with 1 live pod", v.kind, len(v.live))
	}
}

// podsBound counts the bound pods among names.
func (f *fixture) podsBound(names ...string) (int, string) {
	n, desc := 0, ""
	for _, name := range names {
		var p corev1.Pod
		if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, &p); err != nil {
			desc += name + ": " + err.Error() + " "
			continue
		}
		if p.Spec.NodeName != "" {
			n++
		}
		desc += p.Name + "@" + p.Spec.NodeName + "[" + p.Annotations[AnnotationDevices] + "] "
	}
	return n, desc
}

// TestPlainPodGangBoundWhole: plain pods annotated gantry.dev/gang + gang-size=4 wait,
// unbound and without a Workload, until the fourth exists; then the gang is one
// Workload and all four are bound, each with its own GPUs. When all pods succeed the
// Workload is Finished.
func TestPlainPodGangBoundWhole(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("pg-1").H100(4).Obj(), k8s.MakeNode("pg-2").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("pg-cq").Quota("h100", "nvidia.com/gpu", "8").Obj(), k8s.MakeLocalQueue("", "lq", "pg-cq").Obj())
	f.startController()
	names := []string{"w-0", "w-1", "w-2", "w-3"}
	for _, n := range names[:3] {
		f.create(k8s.MakePod("", n).Queue("lq").Gang("train", "4").GPUs("2").Obj())
	}
	time.Sleep(time.Second) // several passes: an incomplete gang must not start
	if n, desc := f.podsBound(names[:3]...); n != 0 {
		t.Fatalf("incomplete gang has bound pods: %s", desc)
	}
	if wl := f.workload(WorkloadNameForGang(KindPodGang, "train")); wl != nil {
		t.Fatalf("incomplete gang already has a Workload")
	}
	f.create(k8s.MakePod("", names[3]).Queue("lq").Gang("train", "4").GPUs("2").Obj())
	f.eventually(20*time.Second, "gang bound whole", func() (bool, string) {
		n, desc := f.podsBound(names...)
		return n == 4, desc
	})
	f.assertNoDeviceSharedTwice()
	wl := f.workload(WorkloadNameForGang(KindPodGang, "train"))
	if wl.Status.Admission == nil || len(wl.Status.Admission.Placements) != 4 || wl.Spec.PodSets[0].Count != 4 {
		t.Errorf("gang workload = %+v; want admitted with 4 placements", wl.Status)
	}
	for _, n := range names {
		f.setPodPhase(n, corev1.PodSucceeded)
	}
	f.eventually(20*time.Second, "gang workload finished", func() (bool, string) {
		wl := f.workload(WorkloadNameForGang(KindPodGang, "train"))
		return wl != nil && meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished), "not finished"
	})
}

// TestVolcanoPodGroupGang: pods naming a Volcano PodGroup (minMember 2) become one
// Workload, admitted and bound as a pair.
func TestVolcanoPodGroupGang(t *testing.T) {
	f := newFixture(t)
	if err := testEnv.CreateCRDs(f.ctx, minimalCRD("scheduling.volcano.sh", "v1beta1", "PodGroup")); err != nil {
		t.Fatal(err)
	}
	f.create(k8s.MakeNode("vg-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("vg-cq").Quota("h100", "nvidia.com/gpu", "4").Obj(), k8s.MakeLocalQueue("", "lq", "vg-cq").Obj())
	f.startController()
	pg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
		"metadata": map[string]any{"name": "pg", "namespace": f.ns, "labels": map[string]any{"gantry.dev/queue-name": "lq"}},
		"spec":     map[string]any{"minMember": int64(2)},
	}}
	if err := f.c.Create(f.ctx, pg); err != nil {
		t.Fatal(err)
	}
	f.create(k8s.MakePod("", "v-0").PodGroup("pg").GPUs("2").Obj(), k8s.MakePod("", "v-1").PodGroup("pg").GPUs("2").Obj())
	f.eventually(20*time.Second, "podgroup bound", func() (bool, string) {
		n, desc := f.podsBound("v-0", "v-1")
		return n == 2, desc
	})
	wl := f.workload(WorkloadNameForGang(KindPodGroup, "pg"))
	if wl == nil || wl.Spec.QueueName != "lq" || wl.OwnerReferences[0].Kind != "PodGroup" {
		t.Fatalf("podgroup workload = %+v; want queue lq owned by the PodGroup", wl)
	}
	if !strings.HasPrefix(wl.Status.Admission.ClusterQueue, "vg-cq") {
		t.Errorf("admitted by %q, want vg-cq", wl.Status.Admission.ClusterQueue)
	}
	f.assertNoDeviceSharedTwice()
}

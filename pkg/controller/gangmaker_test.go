package controller

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// TestGangTouches: only pods of plain-pod gangs (Gantry's annotations, a Volcano
// PodGroup) are recorded, once per gang, signalled once, in a stable order; a take
// forgets them.
func TestGangTouches(t *testing.T) {
	g := newGangTouches()
	other := k8s.MakePod("ns", "other").Gang("a", "2").Obj()
	other.Spec.SchedulerName = "default-scheduler"
	for _, p := range []*corev1.Pod{
		k8s.MakePod("ns", "b-0").Gang("b", "2").Obj(), k8s.MakePod("ns", "a-0").Gang("a", "2").Obj(),
		k8s.MakePod("ns", "a-1").Gang("a", "2").Obj(), k8s.MakePod("ns", "v-0").PodGroup("v").Obj(),
		k8s.MakePod("ns", "solo").Obj(), other,
	} {
		g.touch(p)
	}
	select {
	case <-g.ch:
	default:
		t.Fatal("no signal after touches")
	}
	want := []podOwner{gangOwner("ns", KindPodGang, "a"), gangOwner("ns", KindPodGang, "b"), gangOwner("ns", KindPodGroup, "v")}
	got := g.take()
	if len(got) != len(want) {
		t.Fatalf("take = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("take[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if again := g.take(); len(again) != 0 {
		t.Errorf("second take = %v, want nothing", again)
	}
	select {
	case <-g.ch:
		t.Error("a signal left after the only touches were taken")
	default:
	}
}

// TestGangMakerWorksBetweenPasses: with passes an hour apart, the gang maker alone
// makes a complete plain-pod gang's Workload (an incomplete one gets none) and
// finishes it when its pods have ended; no pass runs meanwhile.
func TestGangMakerWorksBetweenPasses(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("gm-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("gm-cq").Quota("h100", "nvidia.com/gpu", "4").Obj(), k8s.MakeLocalQueue("", "lq", "gm-cq").Obj())
	f.tune = func(o *Options) { o.Interval, o.Resync = time.Hour, time.Hour }
	f.startController()
	f.eventually(10*time.Second, "first pass", func() (bool, string) { return f.passCount() > 0, "no pass yet" })
	passes := f.passCount()
	f.create(k8s.MakePod("", "w-0").Queue("lq").Gang("pair", "2").GPUs("1").Obj(),
		k8s.MakePod("", "u-0").Queue("lq").Gang("trio", "3").GPUs("1").Obj())
	f.create(k8s.MakePod("", "w-1").Queue("lq").Gang("pair", "2").GPUs("1").Obj())
	f.eventually(10*time.Second, "the pair's Workload", func() (bool, string) {
		return f.workload(WorkloadNameForGang(KindPodGang, "pair")) != nil, "none yet"
	})
	if wl := f.workload(WorkloadNameForGang(KindPodGang, "trio")); wl != nil {
		t.Errorf("incomplete gang trio has a Workload")
	}
	for _, n := range []string{"w-0", "w-1"} {
		f.setPodPhase(n, corev1.PodSucceeded)
	}
	f.eventually(10*time.Second, "the pair's Workload finished", func() (bool, string) {
		wl := f.workload(WorkloadNameForGang(KindPodGang, "pair"))
		return wl != nil && meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished), "not finished"
	})
	if got := f.passCount(); got != passes {
		t.Errorf("%d passes ran while the maker worked; want none (the maker alone made and finished the Workload)", got-passes)
	}
}

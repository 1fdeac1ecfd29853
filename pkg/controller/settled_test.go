package controller

import (
	"context"
	"testing"
	"time"

	k8s "github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestBindAllLooksAgainOnlyAtChangedGangs: bindAll binds an admitted gang's pods; a
// gang shown bound only by the binder's own binds is not settled (a bind may still
// fail); once the informer shows every pod bound it is settled and left alone; a pod
// replaced under it (a Job recreating one) is bound into the free slot at once.
func TestBindAllLooksAgainOnlyAtChangedGangs(t *testing.T) {
	rec := &recordingBinder{}
	ctl := &Controller{binds: newTestPipeline(t, rec.client(), func() {}), log: logr.Discard()}
	c := newStateCache()
	c.apply(k8s.MakeNode("n0").H100(8).Obj())
	wl := k8s.MakeWorkload("ns", "wl").Obj()
	wl.ResourceVersion = "1"
	wl.Status.Admission = &v1alpha1.Admission{ClusterQueue: "cq", Placements: []v1alpha1.PodPlacement{
		{PodSet: "main", Index: 0, Node: "n0", Devices: []string{"GPU-0"}}, {PodSet: "main", Index: 1, Node: "n0", Devices: []string{"GPU-1"}}}}
	c.apply(&wl)
	mkPod := func(name, node, slot string) *corev1.Pod {
		p := pod(name, node, map[string]string{AnnotationWorkload: "ns/wl"})
		p.Namespace, p.UID = "ns", types.UID("uid-"+name)
		if slot != "" {
			p.Annotations[AnnotationPodSlot] = slot
		}
		return p
	}
	c.apply(mkPod("a", "", ""))
	c.apply(mkPod("b", "", ""))
	ctx, now := context.Background(), time.Unix(1000, 0)
	pass := func() {
		t.Helper()
		ctl.bindAll(ctx, c.snapshot(), now)
		ctl.binds.wait()
	}
	bound := func() map[string]string {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		out := map[string]string{}
		for name, b := range rec.bound {
			out[name] = b.Annotations[AnnotationPodSlot]
		}
		rec.bound = nil
		return out
	}

	pass()
	if got := bound(); got["a"] != "main-0" || got["b"] != "main-1" {
		t.Fatalf("first pass bound %v, want a in main-0 and b in main-1", got)
	}
	pass() // the informer has not shown the binds yet
	if _, ok := ctl.settled["ns/wl"]; ok {
		t.Error("settled while its pods were bound only by the binder's word")
	}
	c.apply(mkPod("a", "n0", "main-0"))
	c.apply(mkPod("b", "n0", "main-1"))
	pass()
	if _, ok := ctl.settled["ns/wl"]; !ok {
		t.Fatal("not settled with every pod shown bound")
	}
	pass()
	if got := bound(); len(got) != 0 {
		t.Errorf("a settled gang was bound again: %v", got)
	}
	c.remove(mkPod("b", "n0", "main-1"))
	c.apply(mkPod("c", "", ""))
	pass()
	if got := bound(); got["c"] != "main-1" || len(got) != 1 {
		t.Errorf("after b was replaced by c, bound %v; want c in main-1 only", got)
	}
}

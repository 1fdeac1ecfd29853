package controller

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	k8s "github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/cluster"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"
)

// Which bound pods a pass charges on their own (foreign, with devices picked for them)
// and which through their workload's admission, and which workloads are still leaving.
func TestForeignPodsCharging(t *testing.T) {
	lw := newLayerWorld(t, 2)
	lw.admit("run", "n0", []int{0})
	lw.w.workloads = append(lw.w.workloads, k8s.MakeWorkload("ns-cq", "evicted").Obj())
	done := k8s.MakeWorkload("ns-cq", "done").Obj()
	done.Status.Conditions = []metav1.Condition{{Type: v1alpha1.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Succeeded"}}
	lw.w.workloads = append(lw.w.workloads, done)
	lw.write(&lw.w.workloads[0])

	of := func(wl, slot string) *k8s.PodWrapper {
		p := k8s.MakePod("ns-cq", "p").GPUs("1").On("n1").Phase(corev1.PodRunning)
		if wl != "" {
			p.Annotate(AnnotationWorkload, "ns-cq/"+wl)
		}
		if slot != "" {
			p.Annotate(AnnotationPodSlot, slot)
		}
		return p
	}
	deleting := of("run", "main-0").Obj()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	cases := []struct {
		name    string
		pod     *corev1.Pod
		foreign bool
		leaving []api.WorkloadID
	}{
		{name: "no workload", pod: of("", "").Obj(), foreign: true},
		{name: "an admitted workload's pod in its slot", pod: of("run", "main-0").Obj()},
		{name: "an admitted workload's pod without a slot", pod: of("run", "").Obj(), foreign: true},
		{name: "an admitted workload's pod being deleted", pod: deleting, foreign: true},
		{name: "an evicted workload's pod still running", pod: of("evicted", "main-0").Obj(), foreign: true, leaving: []api.WorkloadID{"ns-cq/evicted"}},
		{name: "a finished workload's pod still running", pod: of("done", "main-0").Obj(), foreign: true},
		{name: "an unknown workload's pod", pod: of("gone", "main-0").Obj(), foreign: true},
		{name: "ended", pod: of("", "").Phase(corev1.PodSucceeded).Obj()},
		{name: "not bound", pod: of("", "").On("").Obj()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lw.w.pods = []*corev1.Pod{tc.pod}
			cs, err := buildState(lw.w, lw.convert, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := cs.occupants["pod:ns-cq/p"]; got != tc.foreign {
				t.Errorf("charged on its own: %v, want %v", got, tc.foreign)
			}
			var leaving []api.WorkloadID
			for id := range cs.inFlight {
				leaving = append(leaving, id)
			}
			if !slices.Equal(leaving, tc.leaving) {
				t.Errorf("leaving %v, want %v", leaving, tc.leaving)
			}
		})
	}
}

// The node-loss memo answers only for a Workload as it was checked, under the node view
// it was checked in, and not at all while a node is NotReady (the grace period runs).
func TestLostMemo(t *testing.T) {
	obj := k8s.MakeWorkload("ns", "a").Obj()
	wl := &obj
	wl.ResourceVersion = "7"
	var m lostMemo
	w := &world{nodeGen: 1}
	m.of(w, 1).note(wl)
	if !m.of(w, 1).clear(wl) {
		t.Fatal("a Workload checked under this node view is not remembered")
	}
	changed := *wl
	changed.ResourceVersion = "8"
	if m.of(w, 1).clear(&changed) {
		t.Error("a Workload written since is remembered")
	}
	if m.of(&world{nodeGen: 2}, 1).clear(wl) {
		t.Error("remembered across a node change")
	}
	m.of(w, 1).note(wl)
	if memo := m.of(&world{nodeGen: 1, notReady: map[string]time.Time{"n": time.Unix(1, 0)}}, 1); memo.clear(wl) {
		t.Error("remembered while a node is NotReady")
	}
	unversioned := *wl
	unversioned.ResourceVersion = ""
	m.of(w, 1).note(&unversioned)
	if m.of(w, 1).clear(&unversioned) {
		t.Error("a Workload without a resourceVersion is remembered")
	}
}

// foreignPodsWalk is foreignPods as a walk over every pod: the rule, read directly.
func foreignPodsWalk(w *world, cs *cycleState) []cluster.Change {
	var out []cluster.Change
	for _, p := range w.pods {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		t := cs.byID[api.WorkloadID(p.Annotations[AnnotationWorkload])]
		if t != nil && t.model != nil && t.admitted() && !t.finished() && p.DeletionTimestamp == nil && p.Annotations[AnnotationPodSlot] != "" {
			continue
		}
		if t != nil && t.model != nil && !t.admitted() && !t.finished() {
			cs.inFlight[t.model.ID()] = true
		}
		req, err := ResourceVector(PodRequests(&p.Spec), "spec")
		if err != nil {
			cs.warnings = append(cs.warnings, err.Error())
			continue
		}
		ref := cluster.PodRef{Workload: api.WorkloadID("pod:" + p.Namespace + "/" + p.Name), PodSet: "pod"}
		cs.occupants[string(ref.Workload)] = true
		out = append(out, cluster.Change{Op: cluster.OpBind, Pod: cluster.BoundPod{Ref: ref, Node: p.Spec.NodeName, Requests: req}})
	}
	return out
}

// Over random pods put and deleted in the cache's store and random workload states, the
// filed pods give what the walk over every pod gives, in the same order; so does a
// world built without the filing.
func TestForeignPodsMatchTheWalkProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ids := []string{"ns/a", "ns/b", "ns/c", "ns/d"}
		store := newPodStore()
		for range rapid.IntRange(0, 80).Draw(rt, "ops") {
			name := fmt.Sprintf("p%d", rapid.IntRange(0, 11).Draw(rt, "pod"))
			if rapid.IntRange(0, 4).Draw(rt, "op") == 0 {
				store.del("ns/" + name)
				continue
			}
			pw := k8s.MakePod("ns", name).GPUs("1").Phase(rapid.SampledFrom([]corev1.PodPhase{corev1.PodRunning, corev1.PodPending, corev1.PodSucceeded}).Draw(rt, "phase"))
			if rapid.IntRange(0, 3).Draw(rt, "bound") > 0 {
				pw.On("n0")
			}
			if wl := rapid.SampledFrom(append([]string{""}, ids...)).Draw(rt, "workload"); wl != "" {
				pw.Annotate(AnnotationWorkload, wl)
			}
			if rapid.IntRange(0, 3).Draw(rt, "slot") > 0 {
				pw.Annotate(AnnotationPodSlot, "main-0")
			}
			p := pw.Obj()
			if rapid.IntRange(0, 5).Draw(rt, "deleting") == 0 {
				p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
			}
			store.put(p)
		}
		newState := func() *cycleState {
			cs := &cycleState{byID: map[api.WorkloadID]*tracked{}, inFlight: map[api.WorkloadID]bool{}, occupants: map[string]bool{}}
			return cs
		}
		states := map[string]int{}
		for _, id := range ids {
			states[id] = rapid.IntRange(0, 3).Draw(rt, "state "+id) // admitted, evicted, finished, unknown
		}
		fill := func(cs *cycleState) {
			for _, id := range ids {
				ns, name, _ := strings.Cut(id, "/")
				obj := k8s.MakeWorkload(ns, name).Obj()
				tr := &tracked{obj: &obj, model: &api.Workload{Meta: api.Meta{Namespace: ns, Name: name}}}
				switch states[id] {
				case 0:
					obj.Status.Admission = &v1alpha1.Admission{ClusterQueue: "cq"}
					tr.charges = true
				case 1:
					tr.leaving = true
				case 2:
					obj.Status.Conditions = []metav1.Condition{{Type: v1alpha1.WorkloadFinished, Status: metav1.ConditionTrue}}
					tr.model = nil
				default:
					continue
				}
				cs.byID[api.WorkloadID(id)] = tr
			}
		}
		pods := store.all.sortedShared()
		filed := &world{pods: pods, boundPods: &boundPods{loose: store.loose.sortedShared(), slotted: maps.Clone(store.slotted)}}
		unfiled := &world{pods: pods}
		wantCS := newState()
		fill(wantCS)
		wantOut := foreignPodsWalk(unfiled, wantCS)
		for _, w := range []*world{filed, unfiled} {
			cs := newState()
			fill(cs)
			got := foreignPods(w, cs)
			if !reflect.DeepEqual(got, wantOut) || !reflect.DeepEqual(cs.inFlight, wantCS.inFlight) || !reflect.DeepEqual(cs.occupants, wantCS.occupants) {
				rt.Fatalf("filed=%v: got %v (leaving %v), want %v (leaving %v)", w.boundPods != nil, got, cs.inFlight, wantOut, wantCS.inFlight)
			}
		}
	})
}

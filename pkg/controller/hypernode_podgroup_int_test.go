package controller

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestPodGroupNetworkTopologyOnCluster: plain pods of a Volcano PodGroup whose
// networkTopology is hard and bounded by tier 1 (by number or by the tier's name) land
// inside one tier-1 HyperNode, the one of two nodes; a gang no tier-1 HyperNode holds
// waits, its Workload's message naming the tier level; bounded by tier 2, it spans the
// spine (the HyperNodes' Topology is in the pass's queue objects).
func TestPodGroupNetworkTopologyOnCluster(t *testing.T) {
	for _, tc := range []struct {
		name, prefix string
		nt           map[string]any
		pods         int
		wantNodes    []string // nil: the gang waits
		wantTier     int32    // the Workload's bound; 0 means 1
	}{
		{name: "tier-bound", prefix: "vta-", nt: map[string]any{"mode": "hard", "highestTierAllowed": int64(1)},
			pods: 2, wantNodes: []string{"vta-b0", "vta-b1"}},
		{name: "tier-name", prefix: "vtn-", nt: map[string]any{"mode": "hard", "highestTierName": "rack"},
			pods: 2, wantNodes: []string{"vtn-b0", "vtn-b1"}},
		{name: "too-big", prefix: "vtb-", nt: map[string]any{"mode": "hard", "highestTierAllowed": int64(1)}, pods: 3},
		// Bounded by the spine (tier 2): the HyperNode Topology's higher tier is used.
		{name: "spine", prefix: "vts-", nt: map[string]any{"mode": "hard", "highestTierAllowed": int64(2)},
			pods: 3, wantNodes: []string{"vts-a0", "vts-b0", "vts-b1"}, wantTier: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if err := testEnv.CreateCRDs(f.ctx, hyperNodeCRD(t), minimalCRD("scheduling.volcano.sh", "v1beta1", "PodGroup")); err != nil {
				t.Fatal(err)
			}
			p := tc.prefix
			f.create(k8s.MakeNode(p+"a0").H100(8).Obj(), k8s.MakeNode(p+"b0").H100(8).Obj(), k8s.MakeNode(p+"b1").H100(8).Obj(),
				k8s.MakeFlavor("h100").Obj(), k8s.MakeClusterQueue(p+"cq").Quota("h100", "nvidia.com/gpu", "24").Obj(),
				k8s.MakeLocalQueue("", "lq", p+"cq").Obj())
			createRacks(f, p)
			f.startController()
			pg := &unstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"name": "pg", "namespace": f.ns, "labels": map[string]any{"gantry.dev/queue-name": "lq"}},
				"spec":     map[string]any{"minMember": int64(tc.pods), "networkTopology": tc.nt},
			}}
			pg.SetGroupVersionKind(podGroupGVK)
			if err := f.c.Create(f.ctx, pg); err != nil {
				t.Fatal(err)
			}
			var names []string
			for i := range tc.pods {
				names = append(names, "w-"+string(rune('0'+i)))
				f.create(k8s.MakePod("", names[i]).PodGroup("pg").GPUs("8").Obj())
			}
			if tc.wantNodes == nil {
				assertGangWaitsOnTier(f)
				return
			}
			f.eventually(30*time.Second, "gang bound", func() (bool, string) {
				n, desc := f.podsBound(names...)
				return n == len(names), desc
			})
			var got []string
			for _, n := range names {
				var pod corev1.Pod
				if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: n}, &pod); err != nil {
					t.Fatal(err)
				}
				got = append(got, pod.Spec.NodeName)
			}
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(tc.wantNodes, ",") {
				t.Errorf("pods on %v, want %v (one tier-1 HyperNode)", got, tc.wantNodes)
			}
			wl := f.workload(WorkloadNameForGang(KindPodGroup, "pg"))
			tier := max(tc.wantTier, 1)
			if tr := wl.Spec.PodSets[0].TopologyRequest; tr == nil || tr.HighestTierAllowed == nil || *tr.HighestTierAllowed != tier {
				t.Errorf("Workload topology request %+v, want highestTierAllowed %d", tr, tier)
			}
		})
	}
}

// createRacks creates HyperNodes <p>ra {<p>a0} and <p>rb {<p>b0, <p>b1} of tier 1
// (named rack) under <p>spine (tier 2, named spine), deleted when the test ends
// (cluster-scoped: the fixture's cleanup leaves them).
func createRacks(f *fixture, p string) {
	hns := []*unstructured.Unstructured{hyperNodeObj(p+"ra", 1, p+"a0"), hyperNodeObj(p+"rb", 1, p+"b0", p+"b1"), hyperNodeObj(p+"spine", 2, p+"ra", p+"rb")}
	for i, h := range hns {
		name := "rack"
		if i == 2 {
			name = "spine"
		}
		if err := unstructured.SetNestedField(h.Object, name, "spec", "tierName"); err != nil {
			f.t.Fatal(err)
		}
		if err := f.c.Create(f.ctx, h); err != nil {
			f.t.Fatal(err)
		}
	}
	f.t.Cleanup(func() {
		for _, h := range hns {
			_ = f.c.Delete(context.Background(), h)
		}
	})
}

// assertGangWaitsOnTier waits for the PodGroup's Workload to be refused placement with
// a message naming the tier-1 HyperNode level, and checks no pod was bound.
func assertGangWaitsOnTier(f *fixture) {
	f.t.Helper()
	level := api.HyperNodeTierLabel(1)
	f.eventually(30*time.Second, "gang waits on the topology", func() (bool, string) {
		wl := f.workload(WorkloadNameForGang(KindPodGroup, "pg"))
		if wl == nil {
			return false, "no workload yet"
		}
		return wl.Status.Admission == nil && strings.Contains(wl.Status.Message, level), wl.Status.Reason + ": " + wl.Status.Message
	})
	if n, desc := f.podsBound("w-0", "w-1", "w-2"); n != 0 {
		f.t.Errorf("a gang no tier-1 HyperNode holds has bound pods: %s", desc)
	}
}

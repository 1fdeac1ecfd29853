package controller

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/devices"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"pgregory.net/rapid"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// queueNames lists the ClusterQueues and LocalQueues a snapshot converted.
func queueNames(w *world) (cqs, lqs []string) {
	for _, q := range w.objs.ClusterQueues {
		cqs = append(cqs, q.Name)
	}
	for _, q := range w.objs.LocalQueues {
		lqs = append(lqs, q.Key())
	}
	return cqs, lqs
}

// TestCacheConvertsQueueObjectsOncePerChange: passes without a change reuse the
// conversion; a status write does not count as a change (nor asks for a pass); a spec,
// label or membership change does, once. Namespaces count too, but only one holding a
// LocalQueue asks for a pass.
func TestCacheConvertsQueueObjectsOncePerChange(t *testing.T) {
	c := newStateCache()
	cq := k8s.MakeClusterQueue("cq").Quota("h100", "nvidia.com/gpu", "8").Obj()
	cq.Generation, cq.ResourceVersion = 1, "1"
	c.apply(k8s.MakeFlavor("h100").Obj())
	c.apply(cq)
	c.apply(k8s.MakeLocalQueue("ns", "lq", "cq").Obj())
	step := func(what string, want int) *world {
		t.Helper()
		var w *world
		for range 3 { // three passes
			w = c.snapshot()
		}
		if got := c.queues.conversions; got != want {
			t.Errorf("after %s: %d conversions, want %d", what, got, want)
		}
		return w
	}
	w := step("adding the objects", 1)
	if cqs, lqs := queueNames(w); !reflect.DeepEqual(cqs, []string{"cq"}) || !reflect.DeepEqual(lqs, []string{"ns/lq"}) {
		t.Fatalf("converted %v %v, want [cq] [ns/lq]", cqs, lqs)
	}

	status := cq.DeepCopy()
	status.ResourceVersion, status.Status.PendingWorkloads = "2", 3
	if c.apply(status) {
		t.Errorf("a status write asked for a pass")
	}
	step("a status write", 1)

	spec := status.DeepCopy()
	spec.ResourceVersion, spec.Generation = "3", 2
	spec.Spec.ResourceGroups[0].Flavors[0].Resources[0].NominalQuota = resource.MustParse("16")
	c.apply(spec)
	w = step("a quota change", 2)
	if got := w.objs.ClusterQueues[0].ResourceGroups[0].Flavors[0].Resources[0].Nominal; got != 16 {
		t.Errorf("nominal GPU quota %d after the change, want 16", got)
	}

	labelled := spec.DeepCopy()
	labelled.ResourceVersion, labelled.Labels = "4", map[string]string{"team": "a"}
	c.apply(labelled)
	step("a label change", 3)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: map[string]string{"team": "a"}}}
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}}
	if !c.apply(ns) || c.apply(other) {
		t.Errorf("a pass was asked for after a namespace without LocalQueues, or not after one with")
	}
	step("two namespaces", 4)

	c.remove(toolscache.DeletedFinalStateUnknown{Key: "ns/lq", Obj: k8s.MakeLocalQueue("ns", "lq", "cq").Obj()})
	w = step("deleting the LocalQueue", 5)
	if _, lqs := queueNames(w); len(lqs) != 0 {
		t.Errorf("LocalQueues %v after the delete, want none", lqs)
	}
}

// TestCacheBadClusterQueueLeftOut: a ClusterQueue the loader refuses is reported with
// its name and field and left out, with its LocalQueue; the other queues still work,
// and fixing it brings it back.
func TestCacheBadClusterQueueLeftOut(t *testing.T) {
	c := newStateCache()
	bad := k8s.MakeClusterQueue("bad").Quota("h100", "nvidia.com/gpu", "8").Obj()
	bad.Spec.QueueingStrategy = "Random"
	c.apply(k8s.MakeFlavor("h100").Obj())
	c.apply(k8s.MakeClusterQueue("good").Quota("h100", "nvidia.com/gpu", "8").Obj())
	c.apply(bad)
	c.apply(k8s.MakeLocalQueue("ns", "lq-good", "good").Obj())
	c.apply(k8s.MakeLocalQueue("ns", "lq-bad", "bad").Obj())

	w := c.snapshot()
	cqs, lqs := queueNames(w)
	if !reflect.DeepEqual(cqs, []string{"good"}) || !reflect.DeepEqual(lqs, []string{"ns/lq-good"}) {
		t.Errorf("converted %v %v, want [good] [ns/lq-good]", cqs, lqs)
	}
	all := strings.Join(w.warnings, "\n")
	for _, want := range []string{`ClusterQueue bad: spec.queueingStrategy: unknown value "Random"`,
		`LocalQueue ns/lq-bad: spec.clusterQueue: ClusterQueue "bad" not found`} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings do not say %q:\n%s", want, all)
		}
	}

	fixed := bad.DeepCopy()
	fixed.Generation++
	fixed.Spec.QueueingStrategy = "StrictFIFO"
	c.apply(fixed)
	w = c.snapshot()
	if cqs, lqs := queueNames(w); len(cqs) != 2 || len(lqs) != 2 || len(w.warnings) != 0 {
		t.Errorf("after the fix: %v %v warnings %v; want both queues and no warning", cqs, lqs, w.warnings)
	}
}

// TestCacheNodes: a Node is converted on add and update (unhealthy GPUs marked), not on
// a redelivery of the same version, and gone on delete; one Gantry cannot read is left
// out with a warning naming it.
func TestCacheNodes(t *testing.T) {
	c := newStateCache()
	n := k8s.MakeNode("n1").H100(4).Obj()
	n.ResourceVersion = "1"
	c.apply(n)
	bad := k8s.MakeNode("n0").Label("gantry.dev/capacity-type", "free").Obj()
	c.apply(bad)
	w := c.snapshot()
	if len(w.nodes) != 1 || w.nodes[w.nodeIndex["n1"]].GPUCount() != 4 || len(w.unhealthy) != 0 {
		t.Fatalf("nodes %d (n1 GPUs %d), unhealthy %v; want n1 alone with 4 healthy GPUs", len(w.nodes), w.nodes[0].GPUCount(), w.unhealthy)
	}
	if !strings.Contains(strings.Join(w.warnings, "\n"), "node n0") {
		t.Errorf("warnings %v do not name the unreadable node n0", w.warnings)
	}

	view := c.nodeView
	c.apply(n.DeepCopy()) // a resync: same resourceVersion
	if c.nodeView != view {
		t.Errorf("the same node version was converted again")
	}

	sick := n.DeepCopy()
	sick.ResourceVersion, sick.Annotations = "2", map[string]string{devices.AnnotationUnhealthyDevices: "GPU-2"}
	c.apply(sick)
	w = c.snapshot()
	if !reflect.DeepEqual(w.unhealthy, map[string]map[int]bool{"n1": {2: true}}) {
		t.Errorf("unhealthy = %v, want n1 GPU 2", w.unhealthy)
	}

	c.remove(sick)
	c.remove(bad)
	w = c.snapshot()
	if len(w.nodes) != 0 || len(w.nodeIndex) != 0 || w.unhealthy != nil || len(w.warnings) != 0 {
		t.Errorf("after deleting the nodes: %d nodes, unhealthy %v, warnings %v; want nothing", len(w.nodes), w.unhealthy, w.warnings)
	}
}

// workloadAt is a Workload at resourceVersion rv, admitted by cq when cq is set.
func workloadAt(name, rv, cq string) *v1alpha1.Workload {
	wl := k8s.MakeWorkload("ns", name).Obj()
	wl.ResourceVersion = rv
	if cq != "" {
		wl.Status.Admission = &v1alpha1.Admission{ClusterQueue: cq}
	}
	return &wl
}

// admittedIn reports the snapshot's view of the Workload ns/name: present, admitted.
func admittedIn(w *world, name string) (found, admitted bool) {
	wl := w.workloadIndex()["ns/"+name]
	return wl != nil, wl != nil && wl.Status.Admission != nil
}

// TestCacheAssumesOwnWrites: a Workload the controller wrote is read as written until
// the informer shows that version or a newer one; an older informer version does not
// hide it; a write older than what the informer shows is ignored; a delete drops both.
func TestCacheAssumesOwnWrites(t *testing.T) {
	c := newStateCache()
	c.apply(workloadAt("a", "5", ""))
	c.assume(workloadAt("a", "7", "cq")) // the controller admitted it
	if _, adm := admittedIn(c.snapshot(), "a"); !adm {
		t.Fatalf("own admission not seen before the informer delivered it")
	}
	c.apply(workloadAt("a", "6", "")) // an event from before the write
	if _, adm := admittedIn(c.snapshot(), "a"); !adm {
		t.Errorf("an older informer version hid the admission")
	}
	c.apply(workloadAt("a", "7", "cq"))
	if len(c.workloads.assumed) != 0 {
		t.Errorf("assumed version kept after the informer caught up")
	}
	c.assume(workloadAt("a", "3", "")) // a late answer older than what the informer shows
	if _, adm := admittedIn(c.snapshot(), "a"); !adm {
		t.Errorf("an older write replaced the newer informer version")
	}

	c.assume(workloadAt("new", "9", "")) // created by the controller
	w := c.snapshot()
	if found, _ := admittedIn(w, "new"); !found || wlKey(&w.workloads[0]) != "ns/a" || wlKey(&w.workloads[1]) != "ns/new" {
		t.Errorf("created Workload missing or out of order: %v", w.workloadIndex())
	}
	c.now = func() time.Time { return time.Now().Add(2 * assumeTTL) }
	if found, _ := admittedIn(c.snapshot(), "new"); found {
		t.Errorf("an assumed Workload the informer never showed outlived assumeTTL")
	}

	c.assume(workloadAt("a", "8", ""))
	c.remove(workloadAt("a", "8", ""))
	if found, _ := admittedIn(c.snapshot(), "a"); found {
		t.Errorf("deleted Workload still read")
	}
}

// TestSnapshotWorkloadsBelongToThePass: a pass may overwrite its Workloads (it does, with
// what it writes) without touching the cache.
func TestSnapshotWorkloadsBelongToThePass(t *testing.T) {
	c := newStateCache()
	c.apply(workloadAt("a", "1", ""))
	w := c.snapshot()
	w.workloads[0] = *workloadAt("a", "2", "cq")
	if _, adm := admittedIn(c.snapshot(), "a"); adm {
		t.Errorf("a pass's write to its snapshot reached the cache")
	}
	if c.workload("ns/a") == c.workload("ns/a") {
		t.Errorf("workload returned the same struct twice; want a copy per caller")
	}
}

// TestAssumingClientAssumesWorkloadWrites: a status write through the controller's
// client is read back from the cache at once, before any informer event.
func TestAssumingClientAssumesWorkloadWrites(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	wl := workloadAt("a", "", "")
	fc := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&v1alpha1.Workload{}).WithObjects(wl).Build()
	c := newStateCache()
	ac := assumingClient{Client: fc, cache: c}
	if err := fc.Get(context.Background(), client.ObjectKeyFromObject(wl), wl); err != nil {
		t.Fatal(err)
	}
	c.apply(wl.DeepCopy())
	wl.Status.Admission = &v1alpha1.Admission{ClusterQueue: "cq"}
	if err := ac.Status().Update(context.Background(), wl); err != nil {
		t.Fatal(err)
	}
	if got := c.workload("ns/a"); got == nil || got.Status.Admission == nil || got.ResourceVersion != wl.ResourceVersion {
		t.Errorf("cache reads %+v after the status write, want the written admission at %s", got, wl.ResourceVersion)
	}
}

// TestCachePodsIndexed: pods are found by their workload (annotation, job label, gang)
// and by node, and leave both indexes when they move, end or go.
func TestCachePodsIndexed(t *testing.T) {
	c := newStateCache()
	annotated := pod("p1", "n1", map[string]string{AnnotationWorkload: "ns/job-a"})
	labelled := pod("p2", "", nil)
	labelled.Labels = map[string]string{"batch.kubernetes.io/job-name": "a"}
	elsewhere := labelled.DeepCopy()
	elsewhere.Name, elsewhere.Namespace = "p3", "other"
	for _, p := range []*corev1.Pod{annotated, labelled, elsewhere} {
		if p.Namespace == "" {
			p.Namespace = "ns"
		}
		c.apply(p)
	}
	wl := k8s.MakeWorkload("ns", "job-a").Obj()
	wl.Spec.Owner = &v1alpha1.WorkloadOwner{Kind: "Job", Name: "a"}
	podNames := func(ps []*corev1.Pod) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	if got := podNames(c.snapshot().podsOf(&wl)); !reflect.DeepEqual(got, []string{"p1", "p2"}) {
		t.Errorf("podsOf = %v, want [p1 p2] (annotated and labelled, same namespace)", got)
	}
	if got := podNames(c.podsOnNode("n1")); !reflect.DeepEqual(got, []string{"p1"}) {
		t.Errorf("pods on n1 = %v, want [p1]", got)
	}

	order := c.pods.all.keys()
	bound := labelled.DeepCopy()
	bound.Spec.NodeName = "n2"
	c.apply(bound)
	if again := c.pods.all.keys(); &again[0] != &order[0] {
		t.Errorf("an update of a known pod made the pod order be sorted again")
	}
	done := annotated.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	c.apply(done)
	if got := podNames(c.snapshot().podsOf(&wl)); !reflect.DeepEqual(got, []string{"p2"}) {
		t.Errorf("podsOf = %v after p1 ended, want [p2]", got)
	}
	if got := podNames(c.podsOnNode("n2")); !reflect.DeepEqual(got, []string{"p2"}) {
		t.Errorf("pods on n2 = %v after binding, want [p2]", got)
	}

	c.remove(bound)
	c.remove(done)
	w := c.snapshot()
	if len(w.podsOf(&wl)) != 0 || len(c.podsOnNode("n1"))+len(c.podsOnNode("n2")) != 0 || len(w.pods) != 1 {
		t.Errorf("deleted pods still indexed: podsOf %v, n1 %v, n2 %v, %d pods", podNames(w.podsOf(&wl)),
			podNames(c.podsOnNode("n1")), podNames(c.podsOnNode("n2")), len(w.pods))
	}
	if len(c.pods.byOwner) != 1 || len(c.pods.byNode) != 0 {
		t.Errorf("empty index entries kept: %d owners, %d nodes; want 1 (p3's label) and 0", len(c.pods.byOwner), len(c.pods.byNode))
	}
}

// TestCachePriorities: a WorkloadPriorityClass wins over a PriorityClass of the same
// name; deletes take effect.
func TestCachePriorities(t *testing.T) {
	c := newStateCache()
	c.apply(k8s.MakePriorityClass("high", 1000).Obj())
	podClass := func(name string, v int32) *schedulingv1.PriorityClass {
		return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: v}
	}
	c.apply(podClass("high", 5))
	c.apply(podClass("system", 7))
	if got := c.snapshot().priorities; !reflect.DeepEqual(got, map[string]int32{"high": 1000, "system": 7}) {
		t.Errorf("priorities = %v, want high 1000 (the WorkloadPriorityClass) and system 7", got)
	}
	c.remove(k8s.MakePriorityClass("high", 1000).Obj())
	c.remove(podClass("system", 7))
	if got := c.snapshot().priorities; !reflect.DeepEqual(got, map[string]int32{"high": 5}) {
		t.Errorf("priorities = %v after the deletes, want high 5", got)
	}
}

// TestKeyedSortedSharedProperty: over random puts (new keys and updates) and deletes,
// sortedShared returns what sorted does, and a slice it handed out earlier keeps what
// it held then (snapshots share it).
func TestKeyedSortedSharedProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var k keyed[int]
		ref := map[string]int{} // what k holds, read without k's kept order
		refKeys := func() []string { keys := slices.Collect(maps.Keys(ref)); slices.Sort(keys); return keys }
		type handed struct{ got, want []int }
		type handedKeys struct{ got, want []string }
		var out []handed
		var orders []handedKeys
		names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}
		for range rapid.IntRange(1, 120).Draw(rt, "steps") {
			key := rapid.SampledFrom(names).Draw(rt, "key")
			if rapid.IntRange(0, 3).Draw(rt, "op") == 0 {
				_, had := ref[key]
				if k.del(key) != had {
					rt.Fatalf("del(%s) reported %v, held %v", key, !had, had)
				}
				delete(ref, key)
			} else {
				v := rapid.IntRange(0, 100).Draw(rt, "value")
				k.put(key, v)
				ref[key] = v
			}
			want := make([]int, 0, len(ref))
			for _, key := range refKeys() {
				want = append(want, ref[key])
			}
			switch rapid.IntRange(0, 2).Draw(rt, "read") {
			case 0:
				got := k.sortedShared()
				if !slices.Equal(got, want) {
					rt.Fatalf("sortedShared %v, want %v", got, want)
				}
				out = append(out, handed{got, slices.Clone(want)})
			case 1:
				keys := k.keys()
				if !slices.Equal(keys, refKeys()) {
					rt.Fatalf("keys %v, want %v", keys, refKeys())
				}
				orders = append(orders, handedKeys{keys, slices.Clone(keys)})
			}
		}
		for i, h := range out {
			if !slices.Equal(h.got, h.want) {
				rt.Fatalf("slice %d handed out as %v now holds %v", i, h.want, h.got)
			}
		}
		for i, h := range orders {
			if !slices.Equal(h.got, h.want) {
				rt.Fatalf("keys %d handed out as %v now hold %v", i, h.want, h.got)
			}
		}
	})
}

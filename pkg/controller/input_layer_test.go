package controller

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	k8s "github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"pgregory.net/rapid"
)

// layerWorld is a pass's world of GPU nodes, ClusterQueue "cq" (LocalQueue ns-cq/lq)
// with 8 H100s a node, and the workloads the test admits, as the cache would show it.
type layerWorld struct {
	w      *world
	free   map[string][]bool // node -> GPU index -> free
	rv     int
	seq    int64
	models map[string]*api.Workload // the feeder's models by "key/generation"
	at     time.Time
}

func newLayerWorld(t testing.TB, nodes int) *layerWorld {
	t.Helper()
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(gt.MakeClusterQueue("cq").
		ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(resources.NvidiaGPU, strconv.Itoa(8*nodes)).Obj()).Obj()).Obj()
	lw := &layerWorld{w: &world{objs: objs, nodeIndex: map[string]int{}, base: &baseSnapshots{}, nodeGen: 1},
		free: map[string][]bool{}, models: map[string]*api.Workload{}, at: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	for i := range nodes {
		name := fmt.Sprintf("n%d", i)
		n, err := cluster.NodeFromKube(api.Node{Object: *k8s.MakeNode(name).H100(8).Obj()})
		if err != nil {
			t.Fatal(err)
		}
		lw.w.nodeIndex[name] = len(lw.w.nodes)
		lw.w.nodes = append(lw.w.nodes, n)
		lw.free[name] = []bool{true, true, true, true, true, true, true, true}
	}
	return lw
}

// convert hands out one model per Workload generation, as the feeder does.
func (lw *layerWorld) convert(obj *v1alpha1.Workload, priority int32) (*api.Workload, error) {
	key := wlKey(obj) + "/" + strconv.FormatInt(obj.Generation, 10)
	if m, ok := lw.models[key]; ok {
		return m, nil
	}
	m, err := ToAPIWorkload(obj, priority)
	if err == nil {
		lw.models[key] = m
	}
	return m, err
}

func (lw *layerWorld) find(name string) *v1alpha1.Workload {
	for i := range lw.w.workloads {
		if lw.w.workloads[i].Name == name {
			return &lw.w.workloads[i]
		}
	}
	return nil
}

// write gives a Workload a new resourceVersion, as every write does.
func (lw *layerWorld) write(wl *v1alpha1.Workload) {
	lw.rv++
	wl.ResourceVersion = strconv.Itoa(lw.rv)
	sort.Slice(lw.w.workloads, func(i, j int) bool { return lw.w.workloads[i].Name < lw.w.workloads[j].Name })
}

// admit creates name when new and admits it on node with the given GPUs (the node may
// be one the cluster does not have).
func (lw *layerWorld) admit(name, node string, gpus []int) {
	wl := lw.find(name)
	if wl == nil {
		lw.w.workloads = append(lw.w.workloads, k8s.MakeWorkload("ns-cq", name).Obj())
		wl = &lw.w.workloads[len(lw.w.workloads)-1]
	}
	n := strconv.Itoa(len(gpus))
	wl.Spec.PodSets[0].Requests = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(n)}
	wl.Generation++
	ids := make([]string, len(gpus))
	for i, g := range gpus {
		ids[i] = fmt.Sprintf("GPU-%d", g)
		if f := lw.free[node]; f != nil {
			f[g] = false
		}
	}
	lw.seq++
	lw.at = lw.at.Add(time.Second)
	wl.Status = v1alpha1.WorkloadStatus{State: v1alpha1.StateAdmitted,
		Conditions: []metav1.Condition{{Type: v1alpha1.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: ReasonAdmitted,
			LastTransitionTime: metav1.NewTime(lw.at)}},
		Admission: &v1alpha1.Admission{ClusterQueue: "cq", Sequence: lw.seq,
			PodSetAssignments: []v1alpha1.PodSetAssignment{{Name: "main", Count: ptr.To[int32](1),
				Flavors:       map[corev1.ResourceName]string{"nvidia.com/gpu": "h100"},
				ResourceUsage: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(n)}}},
			Placements: []v1alpha1.PodPlacement{{PodSet: "main", Node: node, Devices: ids}}}}
	lw.write(wl)
}

// release ends wl's admission (evicted back to pending) or, with gone, deletes it.
func (lw *layerWorld) release(name string, gone bool) {
	wl := lw.find(name)
	if a := wl.Status.Admission; a != nil && len(a.Placements) == 1 {
		p := a.Placements[0]
		for _, id := range p.Devices {
			g, _ := strconv.Atoi(id[len("GPU-"):])
			if f := lw.free[p.Node]; f != nil {
				f[g] = true
			}
		}
	}
	if gone {
		i := wl.Name
		lw.w.workloads = slicesDeleteFunc(lw.w.workloads, func(w v1alpha1.Workload) bool { return w.Name == i })
		return
	}
	wl.Status = v1alpha1.WorkloadStatus{State: v1alpha1.StatePending}
	lw.write(wl)
}

func slicesDeleteFunc(s []v1alpha1.Workload, del func(v1alpha1.Workload) bool) []v1alpha1.Workload {
	out := s[:0]
	for _, w := range s {
		if !del(w) {
			out = append(out, w)
		}
	}
	return out
}

// layerOutcome is what a pass reads from buildState's state, for comparing two.
type layerOutcome struct {
	Pods      []cluster.BoundPod
	Free      []resources.Vector
	Admitted  []api.WorkloadID // in the quota's admission order
	Usage     resources.Amount
	Running   []api.WorkloadID
	InFlight  map[api.WorkloadID]bool
	ByID      []api.WorkloadID
	Warnings  []string
	StartedAt []time.Time
}

func outcomeOf(cs *cycleState) layerOutcome {
	o := layerOutcome{Pods: cs.cluster.Pods(), InFlight: cs.inFlight, Warnings: cs.warnings,
		Usage: cs.quota.Usage("cq", "h100", resources.NvidiaGPU)}
	sort.Slice(o.Pods, func(i, j int) bool { return o.Pods[i].Ref.String() < o.Pods[j].Ref.String() })
	for i := range cs.cluster.NumNodes() {
		o.Free = append(o.Free, cs.cluster.Free(i))
	}
	for _, a := range cs.quota.AdmittedWorkloads() {
		o.Admitted = append(o.Admitted, a.ID)
	}
	for _, r := range cs.running {
		o.Running = append(o.Running, r.ID)
		o.StartedAt = append(o.StartedAt, r.StartedAt)
	}
	o.ByID = sortedKeys(cs.runningByID)
	return o
}

// TestAdmittedLayerMatchesAFreshBuild: over random admissions, evictions, deletions,
// moves, status writes, notices, spec changes and node changes, the state a pass
// builds on the layer kept from the passes before is the state it builds from nothing:
// the same pods on the same devices, free capacity, quota usage and admission order,
// running and leaving workloads, and warnings (an admission on a node the cluster does
// not have is reported every pass).
func TestAdmittedLayerMatchesAFreshBuild(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		lw := newLayerWorld(t, 3)
		layer := newAdmittedLayer()
		names := []string{"a", "b", "c", "d", "e", "f", "g"}
		for step := range rapid.IntRange(1, 40).Draw(rt, "steps") {
			name := rapid.SampledFrom(names).Draw(rt, "name")
			wl := lw.find(name)
			admitted := wl != nil && wl.Status.Admission != nil
			switch action := rapid.IntRange(0, 7).Draw(rt, "action"); {
			case action <= 1 && !admitted:
				node := rapid.SampledFrom([]string{"n0", "n1", "n2", "lost"}).Draw(rt, "node")
				var free []int
				for g, ok := range lw.free[node] {
					if ok {
						free = append(free, g)
					}
				}
				if node == "lost" {
					free = []int{0, 1}
				}
				if len(free) == 0 {
					continue
				}
				n := rapid.IntRange(1, min(4, len(free))).Draw(rt, "gpus")
				lw.admit(name, node, free[:n])
			case action == 2 && admitted:
				lw.release(name, rapid.Bool().Draw(rt, "gone"))
			case action == 3 && admitted: // a status write about something else
				wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: "PodsReady", Status: metav1.ConditionTrue})
				lw.write(wl)
			case action == 4 && admitted: // a preemption notice, or its end
				if wl.Annotations[AnnotationPreemptionNotice] != "" {
					delete(wl.Annotations, AnnotationPreemptionNotice)
				} else {
					wl.Annotations = map[string]string{AnnotationPreemptionNotice: "ns-cq/x"}
				}
				lw.write(wl)
			case action == 5 && admitted: // moved: evicted and admitted again elsewhere
				p := wl.Status.Admission.Placements[0]
				lw.release(name, false)
				lw.admit(name, p.Node, gpuIndices(p.Devices))
			case action == 6 && admitted: // its spec changed: a new model
				wl.Generation++
				lw.write(wl)
			case action == 7: // some node changed
				lw.w.nodeGen++
			default:
				continue
			}
			fresh, err := buildState(lw.w, lw.convert, nil)
			if err != nil {
				rt.Fatal(err)
			}
			kept, err := buildState(lw.w, lw.convert, layer)
			if err != nil {
				rt.Fatal(err)
			}
			if a, b := outcomeOf(kept), outcomeOf(fresh); !reflect.DeepEqual(a, b) {
				rt.Fatalf("step %d: on the kept layer\n%+v\nfrom nothing\n%+v", step, a, b)
			}
		}
	})
}

func gpuIndices(ids []string) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i], _ = strconv.Atoi(id[len("GPU-"):])
	}
	return out
}

// TestAdmittedLayerLaysOutOnlyWhatChanged: a pass keeps the layout of every workload
// whose admission did not change (a status write about something else included), lays
// out a new or moved one, and lays out everything again when the nodes changed.
func TestAdmittedLayerLaysOutOnlyWhatChanged(t *testing.T) {
	lw := newLayerWorld(t, 2)
	lw.admit("a", "n0", []int{0, 1})
	lw.admit("b", "n1", []int{0})
	layer := newAdmittedLayer()
	build := func() {
		t.Helper()
		if _, err := buildState(lw.w, lw.convert, layer); err != nil {
			t.Fatal(err)
		}
	}
	build()
	a, b := layer.entries["ns-cq/a"], layer.entries["ns-cq/b"]
	if a == nil || b == nil {
		t.Fatalf("entries %v, want a and b laid out", layer.entries)
	}
	wl := lw.find("a")
	wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: "PodsReady", Status: metav1.ConditionTrue})
	lw.write(wl)
	lw.admit("c", "n1", []int{1, 2})
	build()
	if layer.entries["ns-cq/a"] != a || layer.entries["ns-cq/b"] != b || layer.entries["ns-cq/c"] == nil {
		t.Errorf("after a status write and a new admission: a kept %v, b kept %v, c laid out %v; want all three",
			layer.entries["ns-cq/a"] == a, layer.entries["ns-cq/b"] == b, layer.entries["ns-cq/c"] != nil)
	}
	lw.release("b", false)
	lw.admit("b", "n0", []int{4})
	build()
	if nb := layer.entries["ns-cq/b"]; nb == nil || nb == b || layer.entries["ns-cq/a"] != a {
		t.Errorf("after b moved: b laid out again %v, a kept %v; want both", nb != nil && nb != b, layer.entries["ns-cq/a"] == a)
	}
	a = layer.entries["ns-cq/a"]
	lw.admit("lost", "gone", []int{0})
	build()
	build()
	if layer.entries["ns-cq/a"] != a {
		t.Error("a workload on a node the cluster lacks (laid out by each pass) made the layer lay a out again")
	}
	lw.w.nodeGen++
	build()
	if layer.entries["ns-cq/a"] == a {
		t.Error("after a node change a's layout was kept; want everything laid out again on the new nodes")
	}
}

// BenchmarkBuildState is one pass's state build with 10,000 admitted one-GPU workloads
// on 2,000 nodes, one of them moved each pass: laid out from nothing ("fresh", what
// every pass did before the layer) and on the layer kept from the pass before ("kept").
func BenchmarkBuildState(b *testing.B) {
	for _, mode := range []string{"fresh", "kept"} {
		b.Run(mode, func(b *testing.B) {
			lw := newLayerWorld(b, 2000)
			for i := range 10000 {
				lw.admit(fmt.Sprintf("w%05d", i), fmt.Sprintf("n%d", i%2000), []int{i / 2000})
			}
			var layer *admittedLayer
			if mode == "kept" {
				layer = newAdmittedLayer()
			}
			if _, err := buildState(lw.w, lw.convert, layer); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				name := fmt.Sprintf("w%05d", i%10000)
				p := lw.find(name).Status.Admission.Placements[0]
				lw.release(name, false)
				lw.admit(name, p.Node, gpuIndices(p.Devices))
				if _, err := buildState(lw.w, lw.convert, layer); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package controller

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestMatchGang(t *testing.T) {
	two := []v1alpha1.PodPlacement{{PodSet: "main", Index: 0, Node: "n1"}, {PodSet: "main", Index: 1, Node: "n2"}}
	mixed := []v1alpha1.PodPlacement{{PodSet: "head", Index: 0, Node: "n1"}, {PodSet: "workers", Index: 0, Node: "n2"}}
	bySetLabel := func(p *corev1.Pod) string { return p.Labels["set"] }
	withSet := func(name, set string) *corev1.Pod {
		p := pod(name, "", nil)
		p.Labels = map[string]string{"set": set}
		return p
	}
	cases := []struct {
		name       string
		placements []v1alpha1.PodPlacement
		pods       []*corev1.Pod
		podSetOf   func(*corev1.Pod) string
		// want maps each pod to bind to its slot; nil means "bind nothing yet".
		want map[string]string
	}{
		{name: "incomplete gang binds nothing", placements: two, pods: []*corev1.Pod{pod("a", "", nil)}, podSetOf: podSetOfJob},
		{name: "complete gang in name order", placements: two, pods: []*corev1.Pod{pod("b", "", nil), pod("a", "", nil)},
			podSetOf: podSetOfJob, want: map[string]string{"a": "main-0", "b": "main-1"}},
		{name: "a bound pod keeps its slot; a replacement takes the free one", placements: two,
			pods:     []*corev1.Pod{pod("a", "n1", map[string]string{AnnotationPodSlot: "main-0"}), pod("c", "", nil)},
			podSetOf: podSetOfJob, want: map[string]string{"c": "main-1"}},
		{name: "pods go to slots of their own pod set", placements: mixed,
			pods:     []*corev1.Pod{withSet("w", "workers"), withSet("h", "head")},
			podSetOf: bySetLabel, want: map[string]string{"h": "head-0", "w": "workers-0"}},
		{name: "two workers and no head is incomplete", placements: mixed,
			pods: []*corev1.Pod{withSet("w1", "workers"), withSet("w2", "workers")}, podSetOf: bySetLabel},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := MatchGang(tc.placements, tc.pods, tc.podSetOf)
			if tc.want == nil {
				if got != nil {
					t.Fatalf("got %d bindings, want none", len(got))
				}
				return
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d bindings, want %d", len(got), len(tc.want))
			}
			for _, b := range got {
				if tc.want[b.pod.Name] != slotName(b.slot) {
					t.Errorf("pod %s -> %s, want %s", b.pod.Name, slotName(b.slot), tc.want[b.pod.Name])
				}
			}
		})
	}
}

// recordingBinder is a client whose Binding requests are recorded and answered by
// answer (nil: taken), after release is closed when it is set.
type recordingBinder struct {
	mu      sync.Mutex
	bound   map[string]*corev1.Binding // pod name -> the Binding sent
	answer  func(pod string) error
	release chan struct{}
}

func (r *recordingBinder) client() client.Client {
	return fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		SubResourceCreate: func(ctx context.Context, _ client.Client, sub string, obj client.Object, sr client.Object, _ ...client.SubResourceCreateOption) error {
			if r.release != nil {
				<-r.release
			}
			b := sr.(*corev1.Binding)
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.bound == nil {
				r.bound = map[string]*corev1.Binding{}
			}
			r.bound[obj.GetName()] = b
			if r.answer != nil {
				return r.answer(obj.GetName())
			}
			return nil
		},
	}).Build()
}

func newTestPipeline(t *testing.T, c client.Client, failed func()) *bindPipeline {
	t.Helper()
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return newBindPipeline(c, m, logr.Discard(), failed)
}

// gangOfTwo is two unbound pods and their bindings into two slots of workload ns/wl.
func gangOfTwo() (*v1alpha1.Workload, []*corev1.Pod, []binding) {
	wl := &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl"}}
	pods := []*corev1.Pod{pod("a", "", nil), pod("b", "", nil)}
	var bs []binding
	for i, p := range pods {
		p.Namespace, p.UID = "ns", types.UID("uid-"+p.Name)
		bs = append(bs, binding{pod: p, slot: v1alpha1.PodPlacement{PodSet: "main", Index: int32(i), Node: "n" + strconv.Itoa(i),
			Devices: []string{"gpu-" + strconv.Itoa(i)}}})
	}
	return wl, pods, bs
}

func TestBindPipeline(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "pods/binding"}, "b", errors.New("already bound"))
	cases := []struct {
		name       string
		answer     func(pod string) error
		wantFailed bool
		// wantAssumed are the pods the pipeline shows bound afterwards.
		wantAssumed []string
	}{
		{name: "every pod bound and assumed", wantAssumed: []string{"a", "b"}},
		{name: "already bound counts as bound", answer: func(p string) error {
			if p == "b" {
				return conflict
			}
			return nil
		}, wantAssumed: []string{"a", "b"}},
		{name: "a refused pod is not assumed and a retry is asked for", answer: func(p string) error {
			if p == "b" {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "pods/binding"}, "b", errors.New("no"))
			}
			return nil
		}, wantFailed: true, wantAssumed: []string{"a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingBinder{answer: tc.answer}
			var failed atomic.Bool
			bp := newTestPipeline(t, rec.client(), func() { failed.Store(true) })
			wl, pods, bs := gangOfTwo()
			now := time.Unix(1000, 0)
			if !bp.bind(context.Background(), wl, bs, now) {
				t.Fatal("a new gang was not taken")
			}
			if !bp.settle(context.Background(), "ns/wl") {
				t.Fatal("settle returned early")
			}
			bp.wait()
			if failed.Load() != tc.wantFailed {
				t.Errorf("failed = %v, want %v", failed.Load(), tc.wantFailed)
			}
			for _, b := range bs {
				sent := rec.bound[b.pod.Name]
				if sent == nil || sent.Target.Name != b.slot.Node || sent.Annotations[AnnotationDevices] != b.slot.Devices[0] ||
					sent.Annotations[AnnotationPodSlot] != slotName(b.slot) || sent.Annotations[AnnotationWorkload] != "ns/wl" {
					t.Errorf("pod %s: Binding sent %+v, want node %s with its devices, slot and workload", b.pod.Name, sent, b.slot.Node)
				}
			}
			var assumed []string
			for i, p := range bp.view(pods) {
				if p.Spec.NodeName != "" {
					assumed = append(assumed, p.Name)
					if p.Spec.NodeName != bs[i].slot.Node || p.Annotations[AnnotationPodSlot] != slotName(bs[i].slot) {
						t.Errorf("pod %s shown on %s in slot %s, want %s in %s", p.Name, p.Spec.NodeName,
							p.Annotations[AnnotationPodSlot], bs[i].slot.Node, slotName(bs[i].slot))
					}
				}
				if pods[i].Spec.NodeName != "" {
					t.Errorf("pod %s: the cache's pod was edited", pods[i].Name)
				}
			}
			if !slices.Equal(assumed, tc.wantAssumed) {
				t.Errorf("assumed bound %v, want %v", assumed, tc.wantAssumed)
			}
		})
	}
}

func TestBindPipelineHandsAGangOverOnce(t *testing.T) {
	rec := &recordingBinder{release: make(chan struct{})}
	bp := newTestPipeline(t, rec.client(), func() {})
	wl, _, bs := gangOfTwo()
	ctx := context.Background()
	if !bp.bind(ctx, wl, bs, time.Unix(1000, 0)) {
		t.Fatal("a new gang was not taken")
	}
	if bp.bind(ctx, wl, bs, time.Unix(1000, 0)) {
		t.Error("a gang with binds in flight was taken again")
	}
	if !bp.inFlight("ns/wl") {
		t.Error("a gang with binds in flight is not reported in flight")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if bp.settle(cancelled, "ns/wl") {
		t.Error("settle reported the gang done while its binds were held")
	}
	close(rec.release)
	if !bp.settle(ctx, "ns/wl") || bp.inFlight("ns/wl") {
		t.Error("the gang is still in flight after its binds were answered")
	}
	bp.wait()
	if !bp.bind(ctx, wl, bs, time.Unix(1001, 0)) {
		t.Error("a gang whose binds are done was refused")
	}
	bp.wait()
}

func TestBindPipelineForgetsAssumed(t *testing.T) {
	wl, pods, bs := gangOfTwo()
	start := time.Unix(1000, 0)
	boundA := *pods[0]
	boundA.Spec.NodeName = "n0"
	otherA := boundA // another pod under a's name (recreated): not the one bound
	otherA.UID = "a-recreated"
	cases := []struct {
		name     string
		observed []*corev1.Pod
		at       time.Time
		want     []string // pods still assumed (shown bound while the cache has them unbound)
	}{
		{name: "kept while the informer shows them unbound", observed: pods, at: start.Add(time.Second), want: []string{"a", "b"}},
		{name: "dropped once the informer shows it bound", observed: []*corev1.Pod{&boundA, pods[1]}, at: start.Add(time.Second), want: []string{"b"}},
		{name: "kept while only a new pod of the same name shows bound", observed: []*corev1.Pod{&otherA, pods[1]}, at: start.Add(time.Second), want: []string{"a", "b"}},
		{name: "kept while the informer does not show it", observed: []*corev1.Pod{pods[1]}, at: start.Add(time.Second), want: []string{"a", "b"}},
		{name: "dropped after the TTL", observed: pods, at: start.Add(assumedBindTTL + time.Second)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bp := newTestPipeline(t, (&recordingBinder{}).client(), func() {})
			bp.bind(context.Background(), wl, bs, start)
			bp.wait()
			bp.observe(tc.observed, tc.at)
			var got []string
			for _, p := range bp.view(pods) {
				if p.Spec.NodeName != "" {
					got = append(got, p.Name)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("assumed %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLatestWritesTheNewest(t *testing.T) {
	taken, gate := make(chan struct{}), make(chan struct{})
	var got []int
	l := newLatest(func(v int) {
		if v == 1 {
			close(taken)
			<-gate // the first run holds while more are offered
		}
		got = append(got, v)
	})
	l.offer(1)
	<-taken
	l.offer(2)
	l.offer(3)
	close(gate)
	l.wait()
	if !slices.Equal(got, []int{1, 3}) {
		t.Errorf("runs %v, want [1 3]: the one taken, then the newest only", got)
	}
}

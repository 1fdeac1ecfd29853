package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// slotName is a placement's stable name inside its workload ("main-3").
func slotName(p v1alpha1.PodPlacement) string { return p.PodSet + "-" + strconv.Itoa(int(p.Index)) }

// binding is one pod to bind into one planned slot.
type binding struct {
	pod  *corev1.Pod
	slot v1alpha1.PodPlacement
	// claims are the pod's DRA claims to allocate and reserve before its Binding
	// (planClaims, dra_bind.go).
	claims []claimWrite
}

// MatchGang pairs a workload's live pods with its planned slots. Pods already carrying
// a slot annotation keep it (restart safety: a crash between annotating and binding
// resumes with the same slot); bound pods hold their slot. The unbound rest are paired
// with the free slots of their own pod set (podSetOf tells it; "" fits any) in a stable
// order, and only when every free slot has a pod: a gang is bound whole, never in part.
// It returns nil when the gang is incomplete.
func MatchGang(placements []v1alpha1.PodPlacement, pods []*corev1.Pod, podSetOf func(*corev1.Pod) string) []binding {
	slots := map[string]v1alpha1.PodPlacement{}
	for _, p := range placements {
		slots[slotName(p)] = p
	}
	var out []binding
	var loose []*corev1.Pod
	for _, pod := range pods {
		s, ok := slots[pod.Annotations[AnnotationPodSlot]]
		switch {
		case ok && pod.Spec.NodeName != "":
			delete(slots, slotName(s))
		case ok:
			delete(slots, slotName(s))
			out = append(out, binding{pod: pod, slot: s})
		case pod.Spec.NodeName == "":
			loose = append(loose, pod)
		}
	}
	free := make([]v1alpha1.PodPlacement, 0, len(slots))
	for _, s := range slots {
		free = append(free, s)
	}
	sort.Slice(free, func(i, j int) bool {
		if free[i].PodSet != free[j].PodSet {
			return free[i].PodSet < free[j].PodSet
		}
		return free[i].Index < free[j].Index
	})
	sort.SliceStable(loose, func(i, j int) bool { return podOrder(loose[i]) < podOrder(loose[j]) })
	used := make([]bool, len(loose))
	for _, s := range free {
		k := -1
		for i, p := range loose {
			if ps := podSetOf(p); !used[i] && (ps == "" || ps == s.PodSet) {
				k = i
				break
			}
		}
		if k < 0 {
			return nil // wait for the rest of the gang
		}
		used[k] = true
		out = append(out, binding{pod: loose[k], slot: s})
	}
	return out
}

// podOrder sorts pods by completion index when the job has one, else by name.
func podOrder(p *corev1.Pod) string {
	if idx, ok := p.Annotations["batch.kubernetes.io/job-completion-index"]; ok {
		return fmt.Sprintf("%09s", idx)
	}
	return p.Name
}

// bindingFor is the Binding subresource object of b. It carries the pod's devices,
// slot and Workload as annotations, which the API server copies onto the pod in the
// same write: a pod is never bound without its devices (the device plugin reads them)
// nor annotated without being bound, and one request per pod does both.
func bindingFor(wl *v1alpha1.Workload, b binding) *corev1.Binding {
	return &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: b.pod.Name, Namespace: b.pod.Namespace, UID: b.pod.UID,
			Annotations: bindingAnnotations(wl, b)},
		Target: corev1.ObjectReference{Kind: "Node", Name: b.slot.Node},
	}
}

// bindPod binds one pod; an "already bound" answer counts as done.
func bindPod(ctx context.Context, c client.Client, pod *corev1.Pod, target *corev1.Binding) error {
	err := c.SubResource("binding").Create(ctx, pod, target)
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("bind pod %s/%s to %s: %w", pod.Namespace, pod.Name, target.Target.Name, err)
	}
	return nil
}

// bindingAnnotations are what a bound pod carries: its devices, its slot in the gang and
// its Workload.
func bindingAnnotations(wl *v1alpha1.Workload, b binding) map[string]string {
	return map[string]string{
		AnnotationDevices:  strings.Join(b.slot.Devices, ","),
		AnnotationPodSlot:  slotName(b.slot),
		AnnotationWorkload: wlKey(wl),
	}
}

// bindWindow is how many Binding requests the pipeline has in flight at most: enough
// to keep an API server's write path busy, few enough that a slow server queues them
// here (where an eviction can wait for them) rather than in the client's rate limiter.
const bindWindow = 64

// assumedBindTTL bounds how long a bind this controller made stands in for the
// informer's view of the pod; the informer shows the pod bound long before.
const assumedBindTTL = time.Minute

// bindPipeline binds gangs off the pass: a pass (or the committer, as soon as an
// admission is written) hands it a gang's bindings and goes on; every pod is bound by
// its own request, at most bindWindow at once across all gangs, roughly in the order
// handed over. A gang is handed over once until its binds are done, and the pods it
// bound are assumed bound until the informer shows them so (as kube-scheduler assumes
// its bindings): a later pass never pairs a pod bound a moment ago with another slot.
type bindPipeline struct {
	c       client.Client
	direct  client.Reader // reads a ResourceClaim again after a write conflict
	metrics *Metrics
	log     logr.Logger
	failed  func() // a bind failed: ask for a pass to retry it
	// refused, when set, writes on the Workload (a copy taken when its binds started)
	// that a claim of its gang was refused (errClaimTaken).
	refused func(ctx context.Context, wl *v1alpha1.Workload, err error)
	window  chan struct{}
	wg      sync.WaitGroup

	mu      sync.Mutex
	busy    map[string]chan struct{} // workload key -> closed when its gang's binds are done
	assumed map[types.UID]assumedBind
}

// assumedBind is a pod this controller bound, as the informer will show it.
type assumedBind struct {
	node, slot string
	key        string // the pod's namespace/name, to find it among a pass's pods
	at         time.Time
}

func newBindPipeline(c client.Client, metrics *Metrics, log logr.Logger, failed func()) *bindPipeline {
	return &bindPipeline{c: c, metrics: metrics, log: log, failed: failed, window: make(chan struct{}, bindWindow),
		busy: map[string]chan struct{}{}, assumed: map[types.UID]assumedBind{}}
}

// bind starts binding a gang and returns at once; false when the gang's earlier binds
// are still in flight (it is then not handed over again).
func (bp *bindPipeline) bind(ctx context.Context, wl *v1alpha1.Workload, bs []binding, now time.Time) bool {
	key := wlKey(wl)
	bp.mu.Lock()
	if _, ok := bp.busy[key]; ok {
		bp.mu.Unlock()
		return false
	}
	done := make(chan struct{})
	bp.busy[key] = done
	bp.mu.Unlock()
	targets := make([]*corev1.Binding, len(bs)) // built now: wl belongs to the pass
	var withClaims *v1alpha1.Workload
	for i, b := range bs {
		targets[i] = bindingFor(wl, b)
		if len(b.claims) > 0 && withClaims == nil {
			withClaims = wl.DeepCopy()
		}
	}
	bp.wg.Add(1)
	go func() {
		defer bp.wg.Done()
		err := bp.bindGang(ctx, bs, targets, now)
		bp.mu.Lock()
		delete(bp.busy, key)
		bp.mu.Unlock()
		close(done)
		if err != nil {
			if ctx.Err() == nil {
				bp.log.Error(err, "bind gang", "workload", key)
			}
			if withClaims != nil && bp.refused != nil && errors.Is(err, errClaimTaken) {
				bp.refused(ctx, withClaims, err)
			}
			bp.failed()
		}
	}()
	return true
}

// bindGang binds the gang's pods concurrently within the window and assumes those
// bound; it returns the failures joined.
func (bp *bindPipeline) bindGang(ctx context.Context, bs []binding, targets []*corev1.Binding, now time.Time) error {
	if err := bp.reserveClaims(ctx, bs); err != nil {
		return err // no pod is bound before all the gang's claims are written
	}
	return bp.inWindow(ctx, len(bs), func(i int) error {
		err := bindPod(ctx, bp.c, bs[i].pod, targets[i])
		if err == nil {
			bp.metrics.bindings.Inc()
			bp.assume(bs[i], now)
		}
		return err
	})
}

// inWindow runs do(0..n-1) in parallel inside the pipeline's window of writes in flight
// (a slot is waited for before each starts) and joins their errors; a cancelled ctx
// ends the wait for a slot with its error.
func (bp *bindPipeline) inWindow(ctx context.Context, n int, do func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		select {
		case bp.window <- struct{}{}:
		case <-ctx.Done():
			errs[i] = ctx.Err()
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-bp.window; wg.Done() }()
			errs[i] = do(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (bp *bindPipeline) assume(b binding, now time.Time) {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	bp.assumed[b.pod.UID] = assumedBind{node: b.slot.Node, slot: slotName(b.slot), key: podKey(b.pod), at: now}
}

// inFlight reports whether the workload's gang has binds in flight.
func (bp *bindPipeline) inFlight(key string) bool {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	_, ok := bp.busy[key]
	return ok
}

// settle waits until the workload's binds in flight are done (an eviction must not
// race them); false when ctx ended first.
func (bp *bindPipeline) settle(ctx context.Context, key string) bool {
	bp.mu.Lock()
	done := bp.busy[key]
	bp.mu.Unlock()
	if done == nil {
		return true
	}
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// wait blocks until every gang handed over is done (promptly once ctx ended).
func (bp *bindPipeline) wait() { bp.wg.Wait() }

// observe forgets the assumed binds the pass's pods (in key order) show bound, and
// those older than assumedBindTTL. It looks up the few assumed pods rather than walk
// every pod of the cluster.
func (bp *bindPipeline) observe(pods []*corev1.Pod, now time.Time) {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	for uid, a := range bp.assumed {
		if p := podByKey(pods, a.key); (p != nil && p.UID == uid && p.Spec.NodeName != "") || now.Sub(a.at) > assumedBindTTL {
			delete(bp.assumed, uid)
		}
	}
}

// podByKey finds the pod called key (namespace/name) among pods in key order; nil when
// it is not there.
func podByKey(pods []*corev1.Pod, key string) *corev1.Pod {
	i, found := slices.BinarySearchFunc(pods, key, func(p *corev1.Pod, key string) int { return strings.Compare(podKey(p), key) })
	if !found {
		return nil
	}
	return pods[i]
}

// view is pods as this controller knows them: an unbound pod it bound is shown bound
// to its node, in its slot (a copy: the cache's pods are never edited).
func (bp *bindPipeline) view(pods []*corev1.Pod) []*corev1.Pod {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if len(bp.assumed) == 0 {
		return pods
	}
	var out []*corev1.Pod
	for i, p := range pods {
		a, ok := bp.assumed[p.UID]
		if !ok || p.Spec.NodeName != "" {
			continue
		}
		if out == nil {
			out = slices.Clone(pods)
		}
		cp := *p
		cp.Spec.NodeName = a.node
		cp.Annotations = maps.Clone(p.Annotations)
		if cp.Annotations == nil {
			cp.Annotations = map[string]string{}
		}
		cp.Annotations[AnnotationPodSlot] = a.slot
		out[i] = &cp
	}
	if out == nil {
		return pods
	}
	return out
}

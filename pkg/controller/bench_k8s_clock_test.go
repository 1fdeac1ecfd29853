//go:build k8sscale

package controller

import (
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// podClock watches one namespace's pods and records when each pod was first seen and
// first seen bound, on one clock for every binder, together with what no binder may do
// while it is measured: move a bound pod to another node, or delete a pod.
type podClock struct {
	now     func() time.Time
	gangKey func(*corev1.Pod) string // "" when the pod is in no gang

	mu       sync.Mutex
	pods     map[types.UID]*podTimes
	bound    int
	finished int       // pods seen Succeeded or Failed
	last     time.Time // the latest bind seen
	faults   []string
}

// podTimes is one pod's record.
type podTimes struct {
	name, gang, node string
	gpus             int64
	seen, bound      time.Time
	finished         time.Time // when first seen Succeeded or Failed; zero while live
}

func newPodClock(now func() time.Time, gangKey func(*corev1.Pod) string) *podClock {
	return &podClock{now: now, gangKey: gangKey, pods: map[types.UID]*podTimes{}}
}

// observe records one watch event's pod.
func (c *podClock) observe(p *corev1.Pod) {
	at := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.pods[p.UID]
	if r == nil {
		r = &podTimes{name: p.Name, gang: c.gangKey(p), seen: at, gpus: gpusOf(p)}
		c.pods[p.UID] = r
	}
	if r.finished.IsZero() && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
		r.finished = at
		c.finished++
	}
	switch {
	case p.Spec.NodeName == "" || p.Spec.NodeName == r.node:
	case r.node != "":
		c.faults = append(c.faults, fmt.Sprintf("pod %s moved from node %s to %s", p.Name, r.node, p.Spec.NodeName))
	default:
		r.node, r.bound = p.Spec.NodeName, at
		c.bound++
		if at.After(c.last) {
			c.last = at
		}
	}
}

// deleted records a pod deletion, a fault while the clock runs.
func (c *podClock) deleted(obj any) {
	name := "?"
	if p, ok := obj.(*corev1.Pod); ok {
		name = p.Name
	} else if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		name = d.Key
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults = append(c.faults, "pod "+name+" deleted while the binder ran")
}

// boundCount is how many pods have been seen bound, and when the last bind was seen.
func (c *podClock) boundCount() (int, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bound, c.last
}

// finishedCount is how many pods have been seen finished.
func (c *podClock) finishedCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.finished
}

// seenCount is how many pods the clock has seen.
func (c *podClock) seenCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pods)
}

// snapshot copies the records and faults.
func (c *podClock) snapshot() ([]podTimes, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]podTimes, 0, len(c.pods))
	for _, r := range c.pods {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, append([]string(nil), c.faults...)
}

// watchPods runs a pod informer on ns feeding c until the returned stop is called;
// it returns once the informer has synced.
func watchPods(cs kubernetes.Interface, ns string, c *podClock) (stop func(), err error) {
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.observePod(obj) },
		UpdateFunc: func(_, obj any) { c.observePod(obj) },
		DeleteFunc: c.deleted,
	}); err != nil {
		return nil, fmt.Errorf("pod watch on %s: %w", ns, err)
	}
	done := make(chan struct{})
	factory.Start(done)
	for typ, ok := range factory.WaitForCacheSync(done) {
		if !ok {
			close(done)
			return nil, fmt.Errorf("pod watch on %s: %v informer did not sync", ns, typ)
		}
	}
	return func() { close(done); factory.Shutdown() }, nil
}

func (c *podClock) observePod(obj any) {
	if p, ok := obj.(*corev1.Pod); ok {
		c.observe(p)
	}
}

// gpusOf is the pod's nvidia.com/gpu request (its containers').
func gpusOf(p *corev1.Pod) int64 {
	var n int64
	for _, ctr := range p.Spec.Containers {
		if q, ok := ctr.Resources.Requests["nvidia.com/gpu"]; ok {
			n += q.Value()
		}
	}
	return n
}

// gangClock keeps when each gang was submitted: the earliest create call of its
// Job or of its first pod.
type gangClock struct {
	mu      sync.Mutex
	created map[string]time.Time
}

func newGangClock() *gangClock { return &gangClock{created: map[string]time.Time{}} }

func (g *gangClock) mark(gang string, at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.created[gang]; !ok || at.Before(t) {
		g.created[gang] = at
	}
}

func (g *gangClock) get(gang string) (time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	t, ok := g.created[gang]
	return t, ok
}

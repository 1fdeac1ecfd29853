package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// wakeup coalesces requests for a pass: any number of pokes between two passes make
// one pass, which looks at everything in the cache (level-triggered), so no event is
// lost by merging.
type wakeup struct{ ch chan struct{} }

func newWakeup() *wakeup { return &wakeup{ch: make(chan struct{}, 1)} }

// Poke asks for a pass; it never blocks.
func (w *wakeup) Poke() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// drain forgets pending pokes: the pass about to run sees their cause.
func (w *wakeup) drain() {
	select {
	case <-w.ch:
	default:
	}
}

// latest runs fn in the background on the newest value offered, one run at a time: a
// value offered while fn runs replaces any not yet taken. Writes that only report
// (queue statuses) go this way, so a slow API server delays them, never the pass, and
// the last state offered is always the last written.
type latest[T any] struct {
	fn      func(T)
	mu      sync.Mutex
	next    *T
	running bool
	wg      sync.WaitGroup
}

func newLatest[T any](fn func(T)) *latest[T] { return &latest[T]{fn: fn} }

// offer hands v over and returns at once.
func (l *latest[T]) offer(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next = &v
	if l.running {
		return
	}
	l.running = true
	l.wg.Add(1)
	go l.run()
}

func (l *latest[T]) run() {
	defer l.wg.Done()
	for {
		l.mu.Lock()
		v := l.next
		l.next = nil
		l.running = v != nil
		l.mu.Unlock()
		if v == nil {
			return
		}
		l.fn(*v)
	}
}

// wait blocks until no run is going on.
func (l *latest[T]) wait() { l.wg.Wait() }

// watchedTypes are the objects whose changes can change a decision.
func watchedTypes() []client.Object {
	return []client.Object{
		&batchv1.Job{}, &corev1.Pod{}, &corev1.Node{}, &corev1.Namespace{}, &schedulingv1.PriorityClass{},
		&v1alpha1.Workload{}, &v1alpha1.ClusterQueue{}, &v1alpha1.LocalQueue{}, &v1alpha1.ResourceFlavor{},
		&v1alpha1.Cohort{}, &v1alpha1.WorkloadPriorityClass{}, &v1alpha1.Topology{},
		// Dynamic Resource Allocation (dra_cache.go); not served before Kubernetes 1.34,
		// then simply not watched.
		&resourcev1.DeviceClass{}, &resourcev1.ResourceClaimTemplate{}, &resourcev1.ResourceClaim{},
		&resourcev1.ResourceSlice{},
	}
}

// watcher hangs a handler on the informers of every watched type: it updates the cache
// and pokes a pass. Optional kinds (their CRDs may be installed later) are retried at
// every resync until they are watched.
type watcher struct {
	informers cache.Cache   // nil: nothing is watched (the cache stays empty)
	direct    client.Reader // uncached: asks whether HyperNodes may be listed (hypernode.go)
	cache     *stateCache
	wake      *wakeup
	// discovery tells which API groups are served (servedVersions); nil: every kind is
	// tried through the REST mapper.
	discovery discovery.ServerGroupsInterface
	done      map[string]bool // kinds already watched
	regs      []toolscache.ResourceEventHandlerRegistration
}

func (w *watcher) handler() toolscache.ResourceEventHandler {
	poke := func(changed bool) {
		if changed {
			w.wake.Poke()
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { poke(w.cache.apply(o)) },
		UpdateFunc: func(_, o any) { poke(w.cache.apply(o)) },
		DeleteFunc: func(o any) { poke(w.cache.remove(o)) },
	}
}

// waitSynced blocks until every handler has been given its informer's initial objects,
// so the cache holds the whole cluster; false when ctx ended first.
func (w *watcher) waitSynced(ctx context.Context) bool {
	synced := make([]toolscache.InformerSynced, len(w.regs))
	for i, r := range w.regs {
		synced[i] = r.HasSynced
	}
	return toolscache.WaitForCacheSync(ctx.Done(), synced...)
}

// watching reports whether the kind (its GroupVersionKind's String) is watched, so its
// objects can be listed from the informer cache.
func (w *watcher) watching(kind string) bool { return w.done[kind] }

// ensure registers what is not yet watched; it returns the kinds it could not watch
// (an optional CRD that is not installed), which is not an error.
func (w *watcher) ensure(ctx context.Context) []string {
	if w.informers == nil {
		return nil
	}
	var kinds []string
	var objs []client.Object
	for _, obj := range watchedTypes() {
		kinds, objs = append(kinds, fmt.Sprintf("%T", obj)), append(objs, obj)
	}
	// One discovery read says which optional API groups are served at all: asking the
	// REST mapper kind by kind costs a discovery round trip for every kind of an
	// unserved group (twenty-odd before the first pass, a quarter of a second).
	served := w.servedVersions()
	missing, optional := splitServed(append(optionalKinds(), provReqGVK()), served)
	if hyper := hyperNodeKind(); served == nil || served[hyper.GroupVersion().String()] {
		optional = append(optional, w.hyperNodeKinds(ctx)...)
	}
	for _, gvk := range optional {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		kinds, objs = append(kinds, gvk.String()), append(objs, u)
	}
	missing = append(missing, w.register(ctx, kinds, objs)...)
	if served != nil && !slices.ContainsFunc(kueueVersions(), func(v string) bool { return served[kueueGroup+"/"+v] }) {
		return append(missing, kueueGroup+": not served")
	}
	return append(missing, w.ensureKueue(ctx)...) // kueuecrd.go: version chosen by discovery
}

// servedVersions are the group versions the API server serves ("apps/v1"), from one
// discovery read; nil when unknown (no discovery client, or the read failed): then
// every kind is tried.
func (w *watcher) servedVersions() map[string]bool {
	if w.discovery == nil {
		return nil
	}
	groups, err := w.discovery.ServerGroups()
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			out[v.GroupVersion] = true
		}
	}
	return out
}

// splitServed parts kinds into those whose group version is served (all of them when
// served is nil) and, as ensure reports them, those that are not.
func splitServed(kinds []schema.GroupVersionKind, served map[string]bool) (missing []string, ok []schema.GroupVersionKind) {
	for _, gvk := range kinds {
		if served != nil && !served[gvk.GroupVersion().String()] {
			missing = append(missing, gvk.String()+": not served")
			continue
		}
		ok = append(ok, gvk)
	}
	return missing, ok
}

// register hangs the handler on the informers of the kinds not yet watched, and
// returns those it could not watch.
func (w *watcher) register(ctx context.Context, kinds []string, objs []client.Object) []string {
	infs, errs := w.lookup(ctx, kinds, objs)
	return w.attach(kinds, infs, errs)
}

// lookup gets the informers of the kinds not yet watched, all at once: a kind not yet
// mapped costs the REST mapper a discovery round trip, and a start asks for a few dozen
// kinds before its first pass.
func (w *watcher) lookup(ctx context.Context, kinds []string, objs []client.Object) ([]cache.Informer, []error) {
	infs := make([]cache.Informer, len(objs))
	errs := make([]error, len(objs))
	var wg sync.WaitGroup
	for i, obj := range objs {
		if w.done[kinds[i]] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			infs[i], errs[i] = w.informers.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		}()
	}
	wg.Wait()
	return infs, errs
}

// attach hangs the handler on the informers lookup found, in the kinds' order, and
// returns the kinds it could not watch.
func (w *watcher) attach(kinds []string, infs []cache.Informer, errs []error) []string {
	var missing []string
	for i, kind := range kinds {
		if w.done[kind] {
			continue
		}
		if errs[i] != nil {
			missing = append(missing, kind+": "+errs[i].Error())
			continue
		}
		reg, err := infs[i].AddEventHandler(w.handler())
		if err != nil {
			missing = append(missing, kind)
			continue
		}
		w.regs = append(w.regs, reg)
		w.done[kind] = true
	}
	return missing
}

// sleepCtx waits d or until ctx ends; it reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

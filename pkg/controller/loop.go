package controller

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options configure the controller.
type Options struct {
	// Engine is the engine's configuration; with Seed it makes the scheduling policy
	// (policy), the same engine.Policy the simulator takes.
	Engine engine.Config
	// Interval is the least time between two passes: changes arriving faster are
	// coalesced into the next pass. 0 means 200ms.
	Interval time.Duration
	// Resync runs a pass at least this often even when nothing was observed to change,
	// a safety net for missed events; 0 means 30s.
	Resync time.Duration
	// RetryAfter is how soon a pass that left work unfinished (a refused eviction, a
	// conflict) is retried; 0 means two seconds.
	RetryAfter time.Duration
	// Seed seeds tie-breaking, so equal states give equal decisions.
	Seed int64
	// NodeLostAfter is how long a node may stay NotReady (or unreachable) before the
	// gangs on it are evicted and requeued; 0 means five minutes, the time Kubernetes
	// gives pods on such a node (the default tolerationSeconds of not-ready and
	// unreachable).
	NodeLostAfter time.Duration
	// Now is the clock; nil means time.Now. Tests inject their own.
	Now func() time.Time
}

// Controller runs Gantry's passes: sync jobs, run one engine cycle, commit its plan,
// bind admitted gangs, evict due victims. It is a manager Runnable that only the
// leader runs.
type Controller struct {
	c       client.Client // cached reads; writes of Workloads are assumed in cache
	direct  client.Reader // uncached: the consistent read of Workloads at start, single Gets
	cache   *stateCache   // what passes read, fed by the informers (see doc.go)
	events  record.EventRecorder
	metrics *Metrics
	opts    Options
	log     logr.Logger
	sched   scheduling // the engine's scheduler and what feeds it, kept between passes
	wake    *wakeup
	watch   *watcher
	// Set by each pass for the loop: retry soon, and the next preemption deadline.
	retry        bool
	nextDeadline time.Time
	// admissions numbers the admissions written (Admission.Sequence); a new
	// controller continues after the highest number it finds.
	admissions int64
}

// New returns a controller over the given clients.
func New(c client.Client, direct client.Reader, events record.EventRecorder, metrics *Metrics, log logr.Logger, opts Options) (*Controller, error) {
	if err := opts.Engine.Validate(); err != nil {
		return nil, err
	}
	if opts.Interval <= 0 {
		opts.Interval = 200 * time.Millisecond
	}
	if opts.Resync <= 0 {
		opts.Resync = 30 * time.Second
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = 2 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	cache := newStateCache()
	return &Controller{c: assumingClient{Client: c, cache: cache}, direct: direct, cache: cache, events: events,
		metrics: metrics, opts: opts, log: log, sched: scheduling{feed: newFeeder()}, wake: newWakeup(),
		watch: &watcher{done: map[string]bool{}, cache: cache}}, nil
}

// NeedLeaderElection: only the leader schedules and binds.
func (ctl *Controller) NeedLeaderElection() bool { return true }

// Start runs passes until ctx ends. It first fills the cache: every informer's
// objects, then one consistent read of the Workloads (catchUp). Passes are
// event-driven: informers on every object that matters update the cache and poke a
// coalesced wake-up, passes are at least Interval apart, a timer fires at the next
// preemption deadline, and Resync is the safety net. A failing pass is logged and
// retried after RetryAfter.
func (ctl *Controller) Start(ctx context.Context) error {
	ctl.watch.wake = ctl.wake
	if missing := ctl.watch.ensure(ctx); len(missing) > 0 {
		ctl.log.V(1).Info("not watched (CRD not installed?)", "kinds", missing)
	}
	if !ctl.watch.waitSynced(ctx) || !ctl.catchUp(ctx) {
		return nil
	}
	ctl.wake.Poke()
	var last time.Time
	for {
		if !ctl.waitForWork(ctx) {
			return nil
		}
		if !sleepCtx(ctx, ctl.opts.Interval-time.Since(last)) {
			return nil
		}
		ctl.wake.drain()
		last = time.Now()
		ctl.retry, ctl.nextDeadline = false, time.Time{}
		if err := ctl.Pass(ctx); err != nil && ctx.Err() == nil {
			ctl.log.Error(err, "pass failed")
			ctl.retry = true
		}
	}
}

// waitForWork blocks until a poke, the retry or deadline timer, or the resync; false
// when ctx ended.
func (ctl *Controller) waitForWork(ctx context.Context) bool {
	wait := ctl.opts.Resync
	if ctl.retry && ctl.opts.RetryAfter < wait {
		wait = ctl.opts.RetryAfter
	}
	if !ctl.nextDeadline.IsZero() {
		if d := ctl.nextDeadline.Sub(ctl.opts.Now()) + 10*time.Millisecond; d < wait {
			wait = d
		}
	}
	t := time.NewTimer(max(wait, 0))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-ctl.wake.ch:
	case <-t.C:
		if wait == ctl.opts.Resync {
			ctl.watch.ensure(ctx) // optional CRDs installed since
		}
	}
	return true
}

// Pass runs one full pass on a snapshot of the cache: no List reaches the API server.
// The cache was built from the informers before the first pass, so a pass after a
// crash or a leader change continues where the last one stopped.
func (ctl *Controller) Pass(ctx context.Context) error {
	start := time.Now() // cycle duration metric only; decisions use opts.Now
	now := ctl.opts.Now()
	// Job syncing comes first and reads the cache directly: the Workloads it creates or
	// finishes are assumed there, so the snapshot below already holds them.
	if err := ctl.syncJobs(ctx, ctl.cache.workload, now); err != nil {
		return err
	}
	ctl.syncKinds(ctx, ctl.cache.workload, now)
	w := ctl.cache.snapshot()
	ctl.syncPodGangs(ctx, lookupIn(w.workloadIndex()), w.pods, now)
	ctl.evictLost(ctx, w, now)
	ctl.evictUnhealthy(ctx, w, now)
	ctl.evictDue(ctx, w, now)
	cs, err := buildState(w, ctl.sched.feed.model)
	if err != nil {
		return err
	}
	ctl.reportInvalid(ctx, cs, now)
	p, err := ctl.schedule(ctx, w, cs, now)
	for _, warn := range cs.warnings {
		ctl.log.Info("state", "warning", warn)
	}
	if err != nil {
		return err
	}
	ctl.bindAll(ctx, w)
	ctl.writeQueueStatuses(ctx, cs)
	ctl.metrics.observeCycle(cs, ctl.sched.s, time.Since(start))
	ctl.log.V(1).Info("pass", "took", time.Since(start), "running", len(cs.running),
		"admitted", len(p.Admissions), "rejected", len(p.Rejections))
	return nil
}

// reportInvalid writes the reason on workloads Gantry cannot read.
func (ctl *Controller) reportInvalid(ctx context.Context, cs *cycleState, now time.Time) {
	for _, t := range cs.byID {
		if t.err != nil {
			_ = ctl.writeWorkloadStatus(ctx, t.obj, invalidStatus(t.obj.Status, t.err, now))
		}
	}
}

// bindAll binds every admitted gang whose pods all exist, up to bindWorkers gangs at
// a time (each gang's own pods are bound concurrently too).
func (ctl *Controller) bindAll(ctx context.Context, w *world) {
	type gang struct {
		wl *v1alpha1.Workload
		bs []binding
	}
	var gangs []gang
	for _, wl := range ptrs(w.workloads) {
		if wl.Status.Admission == nil || wl.Annotations[AnnotationPreemptionNotice] != "" {
			continue
		}
		if _, lost := ctl.onLostNode(w, wl, ctl.opts.Now()); lost {
			continue // never bound into a dead slot, even while its eviction is retried
		}
		var mine []*corev1.Pod
		for _, p := range w.podsOf(wl) {
			if p.Spec.SchedulerName == SchedulerName && p.DeletionTimestamp == nil {
				mine = append(mine, p)
			}
		}
		podSetOf, kind := podSetOfJob, ""
		if o := wl.Spec.Owner; o != nil {
			_, podSetOf = podLabelOf(o.Kind)
			kind = o.Kind
		}
		if bs := MatchGang(bindablePlacements(kind, wl.Status.Admission.Placements, mine, podSetOf), mine, podSetOf); len(bs) > 0 {
			gangs = append(gangs, gang{wl, bs})
		}
	}
	const bindWorkers = 16
	sem := make(chan struct{}, bindWorkers)
	var wg sync.WaitGroup
	for _, g := range gangs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			n, err := bindGang(ctx, ctl.c, g.wl, g.bs)
			ctl.metrics.bindings.Add(float64(n))
			if err != nil {
				ctl.log.Error(err, "bind gang", "workload", wlKey(g.wl))
			}
		}()
	}
	wg.Wait()
}

// bindablePlacements are the placements to bind now: all of them, but for a RayJob
// whose submitter pod does not exist yet (KubeRay creates it once the Ray cluster is
// up) those of the submitter pod set, which a later pass binds when its pod appears.
func bindablePlacements(kind string, pls []v1alpha1.PodPlacement, mine []*corev1.Pod, podSetOf func(*corev1.Pod) string) []v1alpha1.PodPlacement {
	if kind != "RayJob" {
		return pls
	}
	for _, p := range mine {
		if podSetOf(p) == rayJobPodSetSubmitter {
			return pls
		}
	}
	return slices.DeleteFunc(slices.Clone(pls), func(p v1alpha1.PodPlacement) bool { return p.PodSet == rayJobPodSetSubmitter })
}

func ptrs[T any](s []T) []*T {
	out := make([]*T, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}

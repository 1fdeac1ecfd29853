package controller

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
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
	// PodsReady is Kueue's waitForPodsReady (podsready*.go); nil: off.
	PodsReady *api.WaitForPodsReady
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
	// podWebhook is set when this controller serves the pod webhook (webhook_pods.go):
	// a serving template that names no scheduler but carries a queue label then gets
	// Gantry as its pods' scheduler on create.
	podWebhook bool
	log        logr.Logger
	sched      scheduling             // the engine's scheduler and what feeds it, kept between passes
	layer      *admittedLayer         // the admitted workloads laid out, kept between passes (input_layer.go)
	settled    map[string]settledGang // gangs bindAll found nothing to bind for (settled.go)
	notLost    lostMemo               // workloads evictLost found on no lost node (nodelost.go)
	binds      *bindPipeline
	queues     *latest[queueWrite] // queue statuses, written off the pass
	gpus       *latest[gpuCount]   // GPU metrics, counted off the pass
	wake       *wakeup
	watch      *watcher
	// gangMu is held while plain-pod gangs are synced, by a pass or the gang maker;
	// makerRunning is set while the maker runs, and gangSwept is when a pass last synced
	// every gang (syncGangs).
	gangMu       sync.Mutex
	makerRunning atomic.Bool
	gangSwept    time.Time
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
	if opts.PodsReady != nil {
		if err := opts.PodsReady.Validate(); err != nil {
			return nil, err
		}
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
	ctl := &Controller{c: assumingClient{Client: c, cache: cache}, direct: direct, cache: cache, events: events,
		metrics: metrics, opts: opts, log: log, sched: scheduling{feed: newFeeder()}, layer: newAdmittedLayer(), wake: newWakeup(),
		watch: &watcher{done: map[string]bool{}, cache: cache, direct: direct}}
	// A failed bind is retried by a later pass: ask for one after RetryAfter (binds run
	// off the pass, so the pass that started them cannot set ctl.retry).
	retry := func() { time.AfterFunc(opts.RetryAfter, ctl.wake.Poke) }
	ctl.binds = newBindPipeline(ctl.c, metrics, log, retry)
	ctl.binds.direct = direct
	// A claim refused while binding (allocated to other devices) is written on the
	// Workload, as a claim that holds the gang before binding is.
	ctl.binds.refused = ctl.noteClaimHold
	ctl.queues = newLatest(func(q queueWrite) { ctl.writeQueueStatuses(q.ctx, q.cs) })
	ctl.gpus = newLatest(metrics.observeGPUsOf)
	return ctl, nil
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
	// Binds run off the pass; none outlives the controller (a new leader or a restart
	// must not race binds of the old one).
	defer ctl.queues.wait()
	defer ctl.gpus.wait()
	defer ctl.binds.wait()
	ctl.watch.wake = ctl.wake
	if missing := ctl.watch.ensure(ctx); len(missing) > 0 {
		ctl.log.V(1).Info("not watched (CRD not installed?)", "kinds", missing)
	}
	began := time.Now()
	if !ctl.watch.waitSynced(ctx) || !ctl.catchUp(ctx) {
		return nil
	}
	ctl.log.V(1).Info("cache filled", "took", time.Since(began))
	var maker sync.WaitGroup
	defer maker.Wait()
	maker.Add(1)
	ctl.makerRunning.Store(true)
	go func() {
		defer maker.Done()
		defer ctl.makerRunning.Store(false)
		ctl.makeGangs(ctx)
	}()
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
	w := ctl.syncGangs(ctx, now)
	synced := time.Since(start)
	ctl.evictLost(ctx, w, now)
	ctl.evictUnhealthy(ctx, w, now)
	ctl.evictDue(ctx, w, now)
	// waitForPodsReady (podsready_pass.go)
	ctl.checkPodsReady(ctx, w, now)
	ctl.releaseClaims(ctx, w) // dra_release.go
	cs, err := buildState(w, ctl.sched.feed.model, ctl.layer)
	if err != nil {
		return err
	}
	if ctl.requeueStaleClaims(ctx, w, cs, now) { // dra_stale.go: read again, the requeued gangs pending
		if cs, err = buildState(w, ctl.sched.feed.model, ctl.layer); err != nil {
			return err
		}
	}
	ctl.reportInvalid(ctx, cs, now)
	built := time.Since(start)
	p, err := ctl.schedule(ctx, w, cs, now)
	scheduled := time.Since(start)
	for _, warn := range cs.warnings {
		ctl.log.Info("state", "warning", warn)
	}
	if err != nil {
		return err
	}
	ctl.bindAll(ctx, w, now)
	ctl.queues.offer(queueWrite{ctx: ctx, cs: &cycleState{byID: cs.byID, quota: cs.quota.Clone()}})
	g := ctl.metrics.observeCycle(cs, ctl.sched.s, time.Since(start))
	g.ctx = ctx
	ctl.gpus.offer(g)
	ctl.log.V(1).Info("pass", "took", time.Since(start), "synced", synced, "built", built, "scheduled", scheduled, "running", len(cs.running),
		"admitted", len(p.Admissions), "rejected", len(p.Rejections))
	return nil
}

// syncGangs creates the Workloads of complete pod gangs and finishes those of ended
// ones over every pod of the pass (syncGangPods), and returns the pass's snapshot,
// taken again when it wrote any, so this pass already admits the Workloads just
// created (the client assumes them in the cache). While the gang maker (gangmaker.go)
// runs it makes them before the pass, so the pass sweeps every gang only every
// gangSweepEvery, and not while the maker is at work (it pokes a pass when it wrote),
// rather than wait for its writes or race them. A sweep takes its snapshot under
// gangMu, so the two never write one gang from different versions.
func (ctl *Controller) syncGangs(ctx context.Context, now time.Time) *world {
	if ctl.makerRunning.Load() && now.Sub(ctl.gangSwept) < gangSweepEvery {
		return ctl.cache.snapshot() // the maker keeps up; the sweep is a safety net
	}
	if !ctl.gangMu.TryLock() {
		return ctl.cache.snapshot()
	}
	defer ctl.gangMu.Unlock()
	ctl.gangSwept = now
	w := ctl.cache.snapshot()
	if !ctl.syncGangPods(ctx, lookupIn(w.workloadIndex()), w.pods, now) {
		return w
	}
	return ctl.cache.snapshot()
}

// gangSweepEvery is how often a pass syncs every plain-pod gang while the gang maker
// runs: the maker handles each gang as its pods change, and a sweep over every pod of
// a 100,000-pod cluster each pass would cost more than it catches (a create that
// failed, and no pod of its gang changed since).
const gangSweepEvery = 10 * time.Second

// syncGangPods runs syncPodGangs over the gangs of pods for gangCreateWorkers gangs at
// once: creating a thousand gangs' Workloads one round trip after another would take
// seconds. It reports whether it wrote a Workload.
func (ctl *Controller) syncGangPods(ctx context.Context, lookup workloadLookup, pods []*corev1.Pod, now time.Time) bool {
	shardOf := map[string]int{}
	shards := make([][]*corev1.Pod, gangCreateWorkers)
	for _, p := range pods {
		kind, name := gangOf(p)
		if kind != KindPodGang && kind != KindPodGroup {
			continue // not a plain-pod gang (serving pods are synced by syncServing)
		}
		key := p.Namespace + "/" + WorkloadNameForGang(kind, name)
		i, ok := shardOf[key]
		if !ok {
			i = len(shardOf) % gangCreateWorkers
			shardOf[key] = i
		}
		shards[i] = append(shards[i], p) // each gang whole in one shard, pods in order
	}
	// lookup is read-only here; each gang's Workload is written by its shard only.
	var wrote atomic.Bool
	var wg sync.WaitGroup
	for _, shard := range shards {
		if len(shard) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ctl.syncPodGangs(ctx, lookup, shard, now) {
				wrote.Store(true)
			}
		}()
	}
	wg.Wait()
	return wrote.Load()
}

// gangCreateWorkers is how many gangs' Workloads syncGangs creates at once. Creating
// them is all the first pass after a start does before it can admit anything, so it
// keeps as many writes in flight as the binder does (bindWindow): with 16, a start
// with a hundred waiting gangs spent a quarter of a second in creates alone.
const gangCreateWorkers = bindWindow

// queueWrite is what the queue statuses are written from: the pass's workloads (no
// longer written once the pass is over) and a copy of its quota.
type queueWrite struct {
	ctx context.Context
	cs  *cycleState
}

// reportInvalid writes the reason on workloads Gantry cannot read.
func (ctl *Controller) reportInvalid(ctx context.Context, cs *cycleState, now time.Time) {
	for _, t := range cs.byID {
		if t.err != nil {
			_ = ctl.writeWorkloadStatus(ctx, t.obj, invalidStatus(t.obj.Status, t.err, now))
		}
	}
}

// bindAll hands the binder every admitted gang whose pods all exist and are not all
// bound, but those with binds still in flight. The pass does not wait for the binds:
// a bound pod shows in the informer (a later pass's input), and until then the binder
// reports it bound. A gang found with nothing to bind is not looked at again while
// neither it nor any of its pods changed (settledGang): with thousands running, that
// look was a sixth of a pass.
func (ctl *Controller) bindAll(ctx context.Context, w *world, now time.Time) {
	ctl.binds.observe(w.pods, now)
	next := make(map[string]settledGang, len(ctl.settled))
	for _, wl := range ptrs(w.workloads) {
		key := wlKey(wl)
		if s, ok := ctl.settled[key]; ok && s.still(w, wl) {
			next[key] = s
			continue
		}
		if ctl.tryBinding(ctx, w, wl, now) {
			next[key] = settledOf(w, wl)
		}
	}
	ctl.settled = next
}

// startBinding hands one admitted gang to the binder when its pods are there and not
// yet bound: the committer calls it as soon as the admission is written, bindAll for
// gangs whose pods came later (a Job's, created once it runs) or whose binds failed.
func (ctl *Controller) startBinding(ctx context.Context, w *world, wl *v1alpha1.Workload, now time.Time) {
	ctl.tryBinding(ctx, w, wl, now)
}

// tryBinding is startBinding; it reports whether the gang is settled: admitted, every
// pod it has bound as the informer shows it (none by this controller's binds alone,
// which may yet fail), and nothing for the binder or the claim reason to do.
func (ctl *Controller) tryBinding(ctx context.Context, w *world, wl *v1alpha1.Workload, now time.Time) bool {
	if wl.Status.Admission == nil || wl.Annotations[AnnotationPreemptionNotice] != "" || ctl.binds.inFlight(wlKey(wl)) {
		return false
	}
	if _, lost := ctl.onLostNode(w, wl, now); lost {
		return false // never bound into a dead slot, even while its eviction is retried
	}
	var mine []*corev1.Pod
	pods := w.podsOf(wl)
	seen := ctl.binds.view(pods)
	for _, p := range seen {
		if p.Spec.SchedulerName == SchedulerName && p.DeletionTimestamp == nil {
			mine = append(mine, p)
		}
	}
	podSetOf, kind := podSetOfJob, ""
	if o := wl.Spec.Owner; o != nil {
		_, podSetOf = podLabelOf(o.Kind)
		kind = o.Kind
	}
	bs := MatchGang(bindablePlacements(kind, wl.Status.Admission.Placements, mine, podSetOf), mine, podSetOf)
	if len(bs) == 0 {
		_, holding := claimsClearedStatus(wl.Status)
		ctl.clearClaimHold(ctx, wl)                 // dra_status.go: bound (or not all pods there): no claim holds it
		return !holding && slices.Equal(seen, pods) // the binder's view changed nothing
	}
	if ok, err := planClaims(w, bs); !ok {
		ctl.log.V(1).Info("gang waits for its resource claims", "workload", wlKey(wl), "reason", err)
		ctl.noteClaimHold(ctx, wl, err)
		return false
	}
	if wl.Status.Reason == ReasonWaitingForClaims {
		ctl.clearClaimHold(ctx, wl)
	}
	ctl.binds.bind(ctx, wl, bs, now)
	return false
}

// started begins at once what an admission just written allows, without waiting for
// the next pass: a Job is unsuspended (its controller then creates the pods), and a
// gang whose pods all exist is handed to the binder. Admissions are written
// concurrently, so it runs concurrently for different workloads; w is only read.
func (ctl *Controller) started(ctx context.Context, w *world, wl *v1alpha1.Workload, now time.Time) {
	ctl.startBinding(ctx, w, wl, now)
	ctl.resumeJob(ctx, wl)
}

// bindablePlacements are the placements to bind now: all of them, but for a RayJob
// whose submitter pod does not exist yet (KubeRay creates it once the Ray cluster is
// up) those of the submitter pod set, which a later pass binds when its pod appears;
// for a StatefulSet the slots of the pods that exist (statefulSetBindable); for a
// TrainJob the pod sets that have pods (presentPodSets).
func bindablePlacements(kind string, pls []v1alpha1.PodPlacement, mine []*corev1.Pod, podSetOf func(*corev1.Pod) string) []v1alpha1.PodPlacement {
	if kind == KindStatefulSet {
		return statefulSetBindable(pls, mine)
	}
	if kind == KindTrainJob {
		return presentPodSets(pls, mine, podSetOf)
	}
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

// presentPodSets are the placements of the pod sets that have pods. A TrainJob whose
// runtime has initializers gets its trainer's pods only once they finish (JobSet
// dependsOn), so each pod set is bound whole as its pods appear; all slots stay
// reserved by the admission.
func presentPodSets(pls []v1alpha1.PodPlacement, mine []*corev1.Pod, podSetOf func(*corev1.Pod) string) []v1alpha1.PodPlacement {
	present := map[string]bool{}
	for _, p := range mine {
		present[podSetOf(p)] = true
	}
	return slices.DeleteFunc(slices.Clone(pls), func(p v1alpha1.PodPlacement) bool { return !present[p.PodSet] })
}

func ptrs[T any](s []T) []*T {
	out := make([]*T, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}

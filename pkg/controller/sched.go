package controller

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// scheduling is the engine's scheduler as the controller drives it: one long-lived
// engine.Scheduler, built by engine.Build as the simulator builds its own, fed with
// the events each pass reads from the cache, and rebuilt (then fed and restored from
// the objects, as after a restart) when the queue objects change.
type scheduling struct {
	s    *engine.Scheduler
	objs *api.Objects // the converted queue objects s was built from
	// classes are the DeviceClasses s was built with, compiled against the live nodes
	// (shared by the cache until a class or a node's GPUs change, so the pointer tells).
	classes *dra.Classes
	feed    *feeder
	// passes and considered count for tests and logs: passes run, and pending
	// workloads handed to the engine by every scheduler built since start.
	passes, considered atomic.Int64
	consideredBefore   int64 // by the schedulers replaced
}

// policy is the scheduling policy of the options: the engine's configuration with the
// controller's seed, what `gantry simulate` builds its scheduler from.
func (o Options) policy() engine.Policy { return engine.Policy{Config: o.Engine, Seed: o.Seed} }

// ensureScheduler builds the scheduler on the first pass and again after the queue
// objects changed (the cache converts them anew, so the pointer tells). It reports
// whether it built one: then every workload is fed again and restored.
func (ctl *Controller) ensureScheduler(w *world, cs *cycleState) (bool, error) {
	sc := &ctl.sched
	classes, err := w.classes()
	if err != nil {
		// A DeviceClass that does not compile holds back only the claims that name it
		// (their workloads say why); every other workload is still scheduled.
		cs.warnings = append(cs.warnings, err.Error())
	}
	if sc.s != nil && sc.classes == classes && (sc.objs == w.objs || sameForWorkloads(sc.objs, w.objs, namespacesOf(cs))) {
		sc.objs = w.objs
		return false, nil
	}
	objs := *w.objs // shared read-only: a copy that adds the workloads
	objs.Workloads = nil
	for _, id := range cs.keys() {
		if t := cs.byID[id]; t.model != nil {
			objs.Workloads = append(objs.Workloads, *t.model) // the fragmentation scorer's shapes
		}
	}
	pol := ctl.opts.policy()
	pol.Classes = classes
	s, err := engine.Build(&objs, pol)
	if err != nil {
		return false, fmt.Errorf("engine: %w", err)
	}
	if sc.s != nil {
		_, c := sc.s.Stats()
		sc.consideredBefore += c
	}
	sc.s, sc.objs, sc.classes = s, w.objs, classes
	sc.feed.reset()
	return true, nil
}

// schedule runs the pass's cycle: it feeds the scheduler what changed (restoring it
// when new), runs one cycle on the pass's world, commits the plan and hands it back.
func (ctl *Controller) schedule(ctx context.Context, w *world, cs *cycleState, now time.Time) (plan.Plan, error) {
	sc := &ctl.sched
	defer sc.passes.Add(1)
	built, err := ctl.ensureScheduler(w, cs)
	if err != nil {
		return plan.Plan{}, err
	}
	changed, errs := sc.feed.observe(sc.s, cs, w.nodeGen)
	for _, err := range errs {
		cs.warnings = append(cs.warnings, err.Error())
	}
	if built {
		r := readRestored(w, cs, now)
		r.apply(sc.s)
		cs.warnings = append(cs.warnings, r.warnings...)
	}
	world := cs.world(now)
	world.Unchanged = !built && !changed
	p := sc.s.Cycle(world)
	commit, held := ctl.podsReadyHold(p, w) // podsready_block.go: blockAdmission
	ctl.admissions = max(ctl.admissions, highestSequence(cs))
	k := &committer{ctx: ctx, c: ctl.c, events: ctl.events, cs: cs, now: now, metrics: ctl.metrics, sequence: ctl.admissions,
		rootOf: sc.s.RootOf, queueETA: sc.s.QueuedQuotaETA, started: func(t *tracked) { ctl.started(ctx, w, t.obj, now) }}
	res, err := k.Apply(commit)
	ctl.admissions = k.sequence
	if err != nil {
		return p, err
	}
	ctl.noteHeld(ctx, cs, held, now)
	sc.feed.committed(sc.s, p, res.Applied, k.noticed, now)
	if next, ok := sc.s.NextWake(); ok && (ctl.nextDeadline.IsZero() || next.Before(ctl.nextDeadline)) {
		ctl.nextDeadline = next // a requeue backoff ends: no event may come then
	}
	_, c := sc.s.Stats()
	sc.considered.Store(sc.consideredBefore + c)
	return p, nil
}

// passStats are the passes run and the pending workloads handed to the engine so far
// (engine.Scheduler.Stats over every scheduler built): a pass in which nothing
// changed hands none. Safe to call while the controller runs.
func (ctl *Controller) passStats() (passes, considered int64) {
	return ctl.sched.passes.Load(), ctl.sched.considered.Load()
}

// sameForWorkloads reports whether two conversions of the queue objects schedule the
// given namespaces' workloads alike: the same ClusterQueues, Cohorts, flavors, priority
// classes and topologies, and the same LocalQueues and Namespaces where workloads
// live. LocalQueues and Namespaces elsewhere (another team's, or a namespace being
// deleted) change no decision, so they do not rebuild the scheduler, which would try
// every parked workload again.
func sameForWorkloads(a, b *api.Objects, namespaces map[string]bool) bool {
	if !reflect.DeepEqual(a.ClusterQueues, b.ClusterQueues) || !reflect.DeepEqual(a.Cohorts, b.Cohorts) ||
		!reflect.DeepEqual(a.Flavors, b.Flavors) || !reflect.DeepEqual(a.PriorityClasses, b.PriorityClasses) ||
		!reflect.DeepEqual(a.Topologies, b.Topologies) || !reflect.DeepEqual(a.DeviceClasses, b.DeviceClasses) ||
		!reflect.DeepEqual(a.QuotaMappings, b.QuotaMappings) {
		return false
	}
	return reflect.DeepEqual(localQueuesIn(a, namespaces), localQueuesIn(b, namespaces)) &&
		reflect.DeepEqual(namespacesIn(a, namespaces), namespacesIn(b, namespaces))
}

func localQueuesIn(o *api.Objects, namespaces map[string]bool) []api.LocalQueue {
	var out []api.LocalQueue
	for _, lq := range o.LocalQueues {
		if namespaces[lq.Namespace] {
			out = append(out, lq)
		}
	}
	return out
}

func namespacesIn(o *api.Objects, namespaces map[string]bool) []api.Namespace {
	var out []api.Namespace
	for _, ns := range o.Namespaces {
		if namespaces[ns.Name] {
			out = append(out, ns)
		}
	}
	return out
}

// namespacesOf names the namespaces of the workloads the pass knows.
func namespacesOf(cs *cycleState) map[string]bool {
	out := map[string]bool{}
	for _, t := range cs.byID {
		out[t.obj.Namespace] = true
	}
	return out
}

// highestSequence is the highest admission number on the pass's Workloads.
func highestSequence(cs *cycleState) int64 {
	var top int64
	for _, t := range cs.byID {
		if a := t.obj.Status.Admission; a != nil {
			top = max(top, a.Sequence)
		}
	}
	return top
}

// classes are the DeviceClasses compiled against the live nodes; nil when the cluster
// has no DRA objects (engine.Build then compiles the objects' own, if any).
func (w *world) classes() (*dra.Classes, error) {
	if w.dra == nil {
		return nil, nil
	}
	return w.dra.compiledClasses()
}

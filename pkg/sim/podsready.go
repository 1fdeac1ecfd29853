package sim

import (
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// PodsReady models the time pods take to become Ready after they are bound (image
// pulls) and Kueue's waitForPodsReady over it: a workload does no work until all its
// pods are Ready; with Config set, one not Ready within Config.Timeout is evicted
// (api.ReasonPodsReadyTimeout) and requeued with Config.Requeuing's backoff, and with
// Config.BlockAdmission nothing is admitted while an admitted workload is not Ready.
type PodsReady struct {
	// Config enables waitForPodsReady; nil: off (pods still take their delay to get Ready).
	Config *api.WaitForPodsReady
	// Delay is how long pods take to become Ready on nodes without the
	// api.AnnotationPodReadyDelay annotation.
	Delay time.Duration
}

// EvPodsReady is the log record of a workload whose pods all became Ready (written only
// when that took time: pods Ready at once log nothing more than placed).
const EvPodsReady EventKind = "pods-ready"

// neverReady is the ready delay of a run whose pods never become Ready: far beyond any
// simulated time, small enough that adding a simulated time cannot overflow.
const neverReady = time.Duration(1 << 60)

// Validate reports settings the simulator cannot run with.
func (p PodsReady) Validate() error {
	if p.Delay < 0 {
		return fmt.Errorf("pod ready delay %s: must not be negative", p.Delay)
	}
	if p.Config != nil {
		return p.Config.Validate()
	}
	return nil
}

// podReadyDelays reads every node's and pool's AnnotationPodReadyDelay, by node name
// (v1 Nodes) and pool name (NodePools, and pools added by NodeAdd events).
type podReadyDelays struct {
	nodes, pools map[string]time.Duration
}

func readPodReadyDelays(objs *api.Objects) (podReadyDelays, error) {
	d := podReadyDelays{nodes: map[string]time.Duration{}, pools: map[string]time.Duration{}}
	put := func(into map[string]time.Duration, name string, ann map[string]string, src api.Source) error {
		v, ok := ann[api.AnnotationPodReadyDelay]
		if !ok {
			return nil
		}
		delay, err := parsePodReadyDelay(v)
		if err != nil {
			return fmt.Errorf("simulate: %s (%s): annotation %s: %w", name, src, api.AnnotationPodReadyDelay, err)
		}
		into[name] = delay
		return nil
	}
	for _, p := range objs.NodePools {
		if err := put(d.pools, p.Name, p.Annotations, p.Source); err != nil {
			return d, err
		}
	}
	for _, ev := range objs.Events {
		if ev.AddPool != nil {
			if err := put(d.pools, ev.AddPool.Name, ev.AddPool.Annotations, ev.Source); err != nil {
				return d, err
			}
		}
	}
	for _, n := range objs.Nodes {
		if err := put(d.nodes, n.Object.Name, n.Object.Annotations, n.Source); err != nil {
			return d, err
		}
	}
	return d, nil
}

func parsePodReadyDelay(v string) (time.Duration, error) {
	if v == api.PodReadyNever {
		return neverReady, nil
	}
	d, err := api.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q: want a duration such as 90s or 5m, or %q", v, api.PodReadyNever)
	}
	return d, nil
}

// readyDelayOf is how long the run's pods take until all are Ready: the slowest node's.
func (s *Simulator) readyDelayOf(st *wlState) time.Duration {
	var worst time.Duration
	for _, b := range st.bindings {
		d, ok := s.readyDelays.nodes[b.Node]
		if !ok {
			if p, pok := s.readyDelays.pools[s.specs[b.Node].Pool]; pok {
				d, ok = p, true
			}
		}
		if !ok {
			d = s.opts.PodsReady.Delay
		}
		if d > worst {
			worst = d
		}
	}
	return worst
}

// watchPodsReady starts a run's wait for Ready pods: when they will be Ready, and when
// waitForPodsReady gives up on them. Called once the run's bindings are set.
func (s *Simulator) watchPodsReady(st *wlState) {
	st.readyDelay, st.heldForReady = s.readyDelayOf(st), false
	if st.readyDelay == 0 {
		return
	}
	st.waitingReady = true
	s.unready++
	if st.readyDelay != neverReady {
		s.queue.schedule(simEvent{at: s.now + st.readyDelay, kind: kReady, wl: st.id, run: st.run})
	}
	if cfg := s.opts.PodsReady.Config; cfg != nil && st.readyDelay > cfg.Timeout {
		s.queue.schedule(simEvent{at: s.now + cfg.Timeout, kind: kNotReady, wl: st.id, run: st.run})
	}
}

// stopWaitingReady ends a run's wait (its pods got Ready, or it left): admissions
// blocked on it may go on.
func (s *Simulator) stopWaitingReady(st *wlState) {
	if !st.waitingReady {
		return
	}
	st.waitingReady = false
	s.unready--
	if s.blocksAdmission() {
		return
	}
	s.dirty = true // blockAdmission held admissions on it: try them now
}

// podsReady handles a run's pods all becoming Ready.
func (s *Simulator) podsReady(e simEvent) {
	st := s.wls[e.wl]
	if st.run != e.run || !st.waitingReady {
		return // stale: that run was evicted
	}
	s.stopWaitingReady(st)
	s.emit(s.record(st, EvPodsReady))
}

// podsReadyTimeout evicts a run whose pods were not all Ready within the timeout and
// requeues it as Kueue does: ordered by its eviction or creation time, backed off by
// its count of timeouts, deactivated past the limit.
func (s *Simulator) podsReadyTimeout(e simEvent) error {
	st := s.wls[e.wl]
	cfg := s.opts.PodsReady.Config
	if st.run != e.run || !st.waitingReady || st.phase != plan.Running {
		return nil // stale, Ready already, or leaving by a preemption
	}
	queueAt := s.clock()
	if cfg.Requeuing.Timestamp == api.RequeueAtCreation {
		queueAt = Epoch().Add(st.w.Timing.SubmitAt) // back at its original place
	}
	why := fmt.Sprintf("%s: pods not all Ready within %s", api.ReasonPodsReadyTimeout, cfg.Timeout)
	if err := s.evictQueued(st, plan.LayerCluster, why, queueAt); err != nil {
		return err
	}
	st.readyTimeouts++
	s.sched.BackOffWith(st.id, s.clock(), st.readyTimeouts, requeuePolicyOf(cfg.Requeuing))
	return nil
}

// requeuePolicyOf is the engine's backoff policy for Kueue's requeuingStrategy.
func requeuePolicyOf(r api.PodsReadyRequeuing) engine.RequeuePolicy {
	return engine.RequeuePolicy{BackoffBase: r.BackoffBase, BackoffMax: r.BackoffMax, BackoffLimit: r.BackoffLimit, Limited: r.Limited}
}

// blocksAdmission reports whether blockAdmission holds admissions now: an admitted
// workload's pods are not all Ready.
func (s *Simulator) blocksAdmission() bool {
	cfg := s.opts.PodsReady.Config
	return cfg != nil && cfg.BlockAdmission && s.unready > 0
}

// holdForPodsReady logs an admission blockAdmission held back, once until the
// workload starts (every cycle holds it again). It is not committed and stays pending;
// the cycle after the blocking workload's pods are Ready (or it is evicted) tries it
// again. Preemptions the plan issues still go ahead, as in Kueue.
func (s *Simulator) holdForPodsReady(a plan.Admission) {
	st := s.wls[a.Workload]
	if st.heldForReady {
		return
	}
	st.heldForReady = true
	r := s.record(st, EvRejected)
	r.Reason, r.Layer = "WaitingForPodsReady: waiting for all admitted workloads to be in PodsReady condition", string(plan.LayerAdmission)
	s.emit(r)
}

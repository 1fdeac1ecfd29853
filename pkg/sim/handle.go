package sim

import (
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// handle applies one internal event to the model.
func (s *Simulator) handle(e simEvent) error {
	switch e.kind {
	case kArrival:
		st := s.wls[e.wl]
		st.submitted, st.queuedAt = true, s.now
		s.touchWorkload(st)
		if err := s.sched.Submit(st.w, s.clock(), st.remaining()); err != nil {
			return fmt.Errorf("simulate: %w", err)
		}
		s.emit(s.record(st, EvSubmitted))
		s.addLive(e.wl)
		s.dirty = true
	case kFinish:
		st := s.wls[e.wl]
		if st.run != e.run || (st.phase != plan.Running && st.phase != plan.Preempting) {
			return nil // stale: the run it belonged to was evicted
		}
		return s.finish(st)
	case kEvict:
		st := s.wls[e.wl]
		if st.run != e.run || st.phase != plan.Preempting {
			return nil
		}
		return s.evict(st, plan.Layer(e.layer), "grace period over")
	case kCluster:
		return s.clusterEvent(s.objs.Events[e.index])
	case kNodesGone:
		return s.nodesGone(e.nodes, "spot interruption: capacity reclaimed", "removed")
	case kNodesBack:
		return s.nodesBack(e.nodes)
	case kWake:
		s.dirty = true
	case kReady:
		s.podsReady(e)
	case kNotReady:
		return s.podsReadyTimeout(e)
	case kProvision:
		return s.provisionStep(e)
	default:
		return fmt.Errorf("simulate: internal event kind %d unknown", e.kind)
	}
	return nil
}

// setPhase moves a workload through the lifecycle state machine; an illegal move is an
// internal error of the simulator, reported instead of silently corrupting the model.
func (s *Simulator) setPhase(st *wlState, to plan.Phase) error {
	next, err := plan.Transition(string(st.w.ID()), st.phase, to)
	if err != nil {
		return fmt.Errorf("simulate at %s: %w", s.now, err)
	}
	if st.phase == plan.Running || next == plan.Running {
		s.views.move(st, next == plan.Running)
	}
	st.phase = next
	s.touchWorkload(st)
	return nil
}

// start records a committed admission: the workload runs from now.
func (s *Simulator) start(st *wlState, bindings []plan.Binding) error {
	if err := s.setPhase(st, plan.Running); err != nil {
		return err
	}
	st.run++
	st.startedAt = s.now
	st.bindings = bindings
	// The running view's fixed parts, computed once per run instead of every cycle.
	st.capacityType, st.pods = s.capacityTypeOf(st), make([]cluster.PodRef, 0, len(bindings))
	for _, b := range bindings {
		st.pods = append(st.pods, podRef(b))
	}
	s.sched.Started(st.w.ID(), s.clock())
	if !st.started {
		st.started, st.firstStart = true, s.now
	}
	s.watchPodsReady(st) // the work starts once the pods are Ready
	if rem := st.remaining(); rem > 0 && st.readyDelay != neverReady {
		s.queue.schedule(simEvent{at: s.now + st.readyDelay + rem, kind: kFinish, wl: st.w.ID(), run: st.run})
	}
	return nil
}

// finish completes a running workload and frees its pods and quota.
func (s *Simulator) finish(st *wlState) error {
	if err := s.unbind(st); err != nil {
		return err
	}
	if err := s.setPhase(st, plan.Finished); err != nil {
		return err
	}
	st.finishedAt = s.now
	s.dropLive(st.w.ID())
	s.sched.Finished(st.w.ID())
	st.base = st.w.Timing.Duration
	s.emit(s.record(st, EvFinished))
	s.dirty = true
	return nil
}

// notice starts a graceful eviction: the workload checkpoints now (when it can) and
// leaves when grace is over.
func (s *Simulator) notice(st *wlState, grace time.Duration, layer plan.Layer) {
	if st.phase != plan.Running {
		return // already leaving: the earlier notice stands
	}
	st.phase = plan.Preempting // Running → Preempting is always allowed
	s.views.move(st, false)    // it leaves the running views
	s.touchWorkload(st)
	if st.w.Timing.CheckpointEvery > 0 {
		st.saved = st.progressAt(s.now) // the notice is the time to write a checkpoint
	}
	s.queue.schedule(simEvent{at: s.now + grace, kind: kEvict, wl: st.w.ID(), run: st.run, layer: string(layer)})
}

// evict removes a running or noticed workload now and requeues it with its saved
// progress; the work since the last checkpoint is lost.
func (s *Simulator) evict(st *wlState, layer plan.Layer, why string) error {
	return s.evictQueued(st, layer, why, s.clock())
}

// evictQueued is evict with the time the workload queues again at (Kueue's requeuing
// timestamp: its eviction, or its creation for its original place).
func (s *Simulator) evictQueued(st *wlState, layer plan.Layer, why string, queueAt time.Time) error {
	if st.phase != plan.Running && st.phase != plan.Preempting {
		return nil
	}
	progress := st.progressAt(s.now)
	saved := st.checkpointAt(s.now)
	if st.w.Timing.Duration > 0 && saved > st.w.Timing.Duration {
		saved = st.w.Timing.Duration
	}
	lost := progress - saved
	if err := s.unbind(st); err != nil {
		return err
	}
	if err := s.setPhase(st, plan.Evicted); err != nil {
		return err
	}
	st.base, st.saved = saved, saved
	r := s.record(st, EvEvicted)
	r.Reason, r.Layer = why, string(layer)
	r.LostGPUMilliSeconds = int64(st.gpuMilli) * int64(lost/time.Second)
	s.emit(r)
	if err := s.setPhase(st, plan.Requeued); err != nil {
		return err
	}
	if err := s.setPhase(st, plan.Pending); err != nil {
		return err
	}
	st.queuedAt = s.now
	s.sched.Requeued(st.w.ID(), queueAt, st.remaining())
	s.emit(s.record(st, EvRequeued))
	s.dirty = true
	return nil
}

// unbind removes the workload's pods from the snapshot and its usage from quota.
func (s *Simulator) unbind(st *wlState) error {
	id := st.w.ID()
	s.stopWaitingReady(st) // a run that leaves blocks no admission
	changes := make([]cluster.Change, 0, len(st.bindings))
	for _, b := range st.bindings {
		if bp, ok := s.snap.Pod(podRef(b)); ok {
			changes = append(changes, cluster.Change{Op: cluster.OpRemove, Pod: bp})
		}
	}
	changes = append(changes, s.releasedClaims(st)...) // shared claims no one uses now
	next, err := s.snap.Apply(changes)
	if err != nil {
		return fmt.Errorf("simulate: releasing %s: %w", id, err)
	}
	s.snap = next
	s.touchBindings(st.bindings)
	if _, ok := s.quota.Admitted(id); ok {
		if err := s.quota.Release(id); err != nil {
			return fmt.Errorf("simulate: releasing quota of %s: %w", id, err)
		}
	}
	st.bindings = nil
	return nil
}

// record starts an event record for a workload.
func (s *Simulator) record(st *wlState, kind EventKind) EventRecord {
	return EventRecord{
		Event: kind, Workload: string(st.w.ID()), ClusterQueue: st.clusterQueue,
		LocalQueue: st.w.Queue, Priority: st.w.Priority, GPUMilli: st.gpuMilli,
	}
}

// workloadMilli is the whole gang's GPU demand in the common unit, by the shared
// accounting rule without a known GPU model (a MIG "<g>g" profile is g sevenths); the
// exact value from the bound devices replaces it once the workload is placed. A request
// the device layer cannot read counts as zero here; admission rejects it with a reason.
func workloadMilli(w *api.Workload) resources.MilliGPU {
	var total resources.MilliGPU
	for _, ps := range w.PodSets {
		m, err := admission.DefaultGPUAccounting(ps.Requests, nil)
		if err != nil {
			continue
		}
		total += m * resources.MilliGPU(ps.Count)
	}
	return total
}

package sim

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// runCycle builds the engine's input from the model, runs one cycle and commits the plan.
func (s *Simulator) runCycle() error {
	s.timedWakes()
	in := s.cycleInput()
	if len(in.Pending) == 0 && len(in.Draining) == 0 {
		return nil // nothing to decide (or all parked until a change): no polling
	}
	s.cycle++
	s.lastCycleAt = s.now
	s.considered += int64(len(in.Pending))
	p := s.eng.Cycle(in)
	if err := p.Validate(); err != nil {
		return fmt.Errorf("simulate: engine produced an invalid plan: %w", err)
	}
	reserved := s.reservedNow()
	res, err := s.committer().Apply(p)
	if err != nil {
		return err
	}
	s.afterCommit(p, res.Applied, reserved)
	return nil
}

// cycleInput is the engine's view of the model right now.
func (s *Simulator) cycleInput() engine.Input {
	in := engine.Input{
		Cycle: s.cycle + 1, Now: s.clock(), Rand: s.rng, Cluster: s.snap, Quota: s.cycleQuota(),
		Flavors:  s.flavors,
		Draining: s.draining(),
		History:  s.preemptionHistory(),
		InFlight: map[api.WorkloadID]bool{}, Nominated: map[api.WorkloadID][]api.WorkloadID{}, PreemptedBy: map[api.WorkloadID]api.WorkloadID{},
		Previous: map[api.WorkloadID]plan.Reservation{},
	}
	for _, id := range s.live {
		st := s.wls[id]
		switch {
		case st.phase == plan.Pending && st.submitted && st.parked == notParked:
			in.Pending = append(in.Pending, engine.Pending{
				Workload: st.w, ClusterQueue: st.clusterQueue, Strategy: st.strategy,
				QueuedAt: Epoch().Add(st.queuedAt), Runtime: st.remaining(),
			})
			if st.reservation != nil {
				in.Previous[id] = *st.reservation
			}
		case st.phase == plan.Running:
			in.Running = append(in.Running, s.runningView(st))
		case st.phase == plan.Preempting:
			in.InFlight[id] = true
		}
		if len(st.nominated) > 0 {
			in.Nominated[id] = st.nominated
		}
		if st.preemptedBy != "" {
			in.PreemptedBy[id] = st.preemptedBy
		}
	}
	return in
}

// runningView is a running workload as placement's preemption and reservations see it.
func (s *Simulator) runningView(st *wlState) placement.Running {
	r := placement.Running{
		ID: st.w.ID(), Queue: st.clusterQueue, Priority: st.w.Priority, Created: st.w.Created,
		StartedAt: Epoch().Add(st.startedAt), GPUMilli: st.gpuMilli, MinRuntime: st.w.MinRuntime,
		Preemptible: true, CapacityType: st.capacityType, Pods: st.pods,
	}
	if st.w.Timing.CheckpointEvery > 0 {
		r.LastCheckpoint = Epoch().Add(st.startedAt + (st.checkpointAt(s.now) - st.base))
	}
	if rem := st.remaining(); rem > 0 {
		r.ExpectedEnd = Epoch().Add(st.startedAt + rem)
	} else if st.w.MaxRuntime > 0 {
		r.ExpectedEnd = Epoch().Add(st.startedAt + st.w.MaxRuntime)
	}
	return r
}

func (s *Simulator) capacityTypeOf(st *wlState) string {
	for _, b := range st.bindings {
		if n, ok := s.specs[b.Node]; ok && n.CapacityType == api.CapacitySpot {
			return api.CapacitySpot
		}
	}
	return api.CapacityOnDemand
}

// flavorText joins the flavors of an admission, sorted and de-duplicated.
func flavorText(a plan.Admission) string {
	set := map[string]bool{}
	for _, ps := range a.PodSets {
		for _, f := range ps.Flavors {
			set[f] = true
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// etaSeconds converts an engine clock time into a log time.
func etaSeconds(t time.Time) *Seconds {
	sec := Seconds(t.Sub(Epoch()))
	return &sec
}

// preemptionHistory is the past preemptions as placement's disruption budgets read them.
func (s *Simulator) preemptionHistory() []placement.PreemptionRecord {
	out := make([]placement.PreemptionRecord, 0, len(s.history))
	for _, h := range s.history {
		out = append(out, placement.PreemptionRecord{Workload: h.victim, Queue: h.queue, At: Epoch().Add(h.at), GPUMilli: h.milli})
	}
	return out
}

// draining names the ClusterQueues whose stop policy is HoldAndDrain.
func (s *Simulator) draining() map[string]bool {
	var out map[string]bool
	for name, cq := range s.cqs {
		if cq.StopPolicy == api.StopHoldAndDrain {
			if out == nil {
				out = map[string]bool{}
			}
			out[name] = true
		}
	}
	return out
}

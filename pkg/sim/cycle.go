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

// runCycle asks the scheduler for a plan over the model, commits it and hands it back.
func (s *Simulator) runCycle() error {
	p := s.sched.Cycle(engine.World{Now: s.clock(), Cluster: s.snap, Quota: s.quota, Running: s.runningViews()})
	if p.IsEmpty() {
		return nil // nothing to decide (or all parked until a change): no polling
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("simulate: engine produced an invalid plan: %w", err)
	}
	res, err := s.committer().Apply(p)
	if err != nil {
		return err
	}
	if s.sched.Committed(p, res.Applied) {
		s.dirty = true // untried workloads left: another cycle at this instant
	}
	return nil
}

// runningViews are the running workloads as placement's preemption and reservations see
// them now (noticed ones are leaving: the scheduler knows them as in flight). They are
// kept between cycles while no workload starts or stops running (runningGen); only the
// checkpoint times of checkpointing workloads move with the clock.
func (s *Simulator) runningViews() []placement.Running {
	if s.views.gen == s.runningGen && s.views.built {
		for i, st := range s.views.of {
			if st.w.Timing.CheckpointEvery > 0 {
				s.views.list[i] = s.runningView(st)
			}
		}
		return s.views.list
	}
	s.views.list, s.views.of = s.views.list[:0], s.views.of[:0]
	for _, id := range s.live {
		if st := s.wls[id]; st.phase == plan.Running {
			s.views.list = append(s.views.list, s.runningView(st))
			s.views.of = append(s.views.of, st)
		}
	}
	s.views.gen, s.views.built = s.runningGen, true
	return s.views.list
}

// runningCache is what runningViews keeps between cycles.
type runningCache struct {
	list  []placement.Running
	of    []*wlState
	gen   uint64
	built bool
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

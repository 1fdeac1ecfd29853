package sim

import (
	"fmt"
	"slices"
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
	s.views.list = s.views.list[:0]
	for _, st := range s.views.of {
		if st.view.ID != st.id || st.viewRun != st.run || st.w.Timing.CheckpointEvery > 0 {
			st.view, st.viewRun = s.runningView(st), st.run
		}
		s.views.list = append(s.views.list, st.view)
	}
	s.views.gen, s.views.built = s.runningGen, true
	return s.views.list
}

// runningCache is what runningViews keeps: of are the running workloads sorted by ID,
// kept as they start and stop (move), so a rebuild walks the running ones only; list
// their views as of gen.
type runningCache struct {
	list  []placement.Running
	of    []*wlState
	gen   uint64
	built bool
}

// move adds st to the running workloads (in) or drops it.
func (c *runningCache) move(st *wlState, in bool) {
	i := sort.Search(len(c.of), func(i int) bool { return c.of[i].id >= st.id })
	there := i < len(c.of) && c.of[i] == st
	switch {
	case in && !there:
		c.of = slices.Insert(c.of, i, st)
	case !in && there:
		c.of = slices.Delete(c.of, i, i+1)
	}
}

// runningView is a running workload as placement's preemption and reservations see it.
func (s *Simulator) runningView(st *wlState) placement.Running {
	r := placement.Running{
		ID: st.id, Queue: st.clusterQueue, Priority: st.w.Priority, Created: st.w.Created,
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

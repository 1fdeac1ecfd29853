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
	p := s.sched.Cycle(engine.World{Now: s.clock(), Cluster: s.snap, Quota: s.quota, Running: s.runningViews(),
		RunningEdits: &s.views.edits, Checks: s.admissionChecks()})
	if p.IsEmpty() {
		return nil // nothing to decide (or all parked until a change): no polling
	}
	if err := s.validator.Validate(&p); err != nil {
		return fmt.Errorf("simulate: engine produced an invalid plan: %w", err)
	}
	res, err := s.committer().Apply(p)
	if err != nil {
		return err
	}
	if s.sched.Committed(p, res.Applied) {
		s.dirty = true // untried workloads left: another cycle at this instant
	}
	err = s.markNeverFits(s.neverFitCandidates(p.Rejections))
	s.sched.Recycle(&p)
	return err
}

// runningViews are the running workloads as placement's preemption and reservations see
// them now (noticed ones are leaving: the scheduler knows them as in flight). The list
// is kept in step with starts and stops (runningCache.move): a start's view is filled in
// here, once its run's fields are set; only checkpointing workloads' views move with the
// clock. Its order is the order of starts as stops left it: the engine's decisions do
// not depend on it (what it takes from the list, it orders itself).
func (s *Simulator) runningViews() []placement.Running {
	c := &s.views
	for _, st := range c.fresh {
		if st.viewAt >= 0 {
			c.list[st.viewAt] = s.runningView(st)
			c.edits.Touch(st.viewAt)
		}
	}
	c.fresh = c.fresh[:0]
	for i := 0; c.checkpointing > 0 && i < len(c.of); i++ { // most fleets: none, no walk
		if st := c.of[i]; st.w.Timing.CheckpointEvery > 0 {
			c.list[i] = s.runningView(st)
			c.edits.Touch(i)
		}
	}
	return c.list
}

// runningCache keeps the running workloads (of) with their views (list, same order): a
// start appends one entry and a stop moves the last one into its place, instead of a
// rebuild of thousands per cycle. fresh are the ones started since the last
// runningViews, views to fill; checkpointing counts those of of that checkpoint.
type runningCache struct {
	list          []placement.Running
	of            []*wlState
	fresh         []*wlState
	checkpointing int
	// edits are the positions of list written since a cycle last read them (the
	// scheduler's reservation walks bring their order up to date from them).
	edits placement.RunningEdits
}

// move adds st to the running workloads (in) or drops it; st.viewAt is its place in
// of (-1 when it is not there).
func (c *runningCache) move(st *wlState, in bool) {
	there := st.viewAt >= 0
	switch {
	case in && !there:
		st.viewAt = len(c.of)
		c.of = append(c.of, st)
		c.list = append(c.list, placement.Running{ID: st.id})
		c.edits.Touch(len(c.list) - 1)
		c.fresh = append(c.fresh, st)
		if st.w.Timing.CheckpointEvery > 0 {
			c.checkpointing++
		}
	case !in && there:
		if st.w.Timing.CheckpointEvery > 0 {
			c.checkpointing--
		}
		i, last := st.viewAt, len(c.of)-1
		c.of[i], c.list[i] = c.of[last], c.list[last]
		c.of[i].viewAt = i
		c.of[last], c.list[last] = nil, placement.Running{}
		c.of, c.list = c.of[:last], c.list[:last]
		c.edits.Touch(i)
		st.viewAt = -1
	}
}

// runningView is a running workload as placement's preemption and reservations see it.
func (s *Simulator) runningView(st *wlState) placement.Running {
	r := placement.Running{
		ID: st.id, Queue: st.clusterQueue, Priority: st.w.Priority, Created: st.w.Created,
		StartedAt: Epoch().Add(st.startedAt), GPUMilli: st.gpuMilli, MinRuntime: st.w.MinRuntime,
		Preemptible: true, CapacityType: st.capacityType, Pods: st.pods,
	}
	if st.readyDelay == neverReady {
		return r // no work, no end in sight: its pods never get Ready
	}
	if st.w.Timing.CheckpointEvery > 0 {
		r.LastCheckpoint = Epoch().Add(st.startedAt + st.readyDelay + (st.checkpointAt(s.now) - st.base))
	}
	if rem := st.remaining(); rem > 0 {
		r.ExpectedEnd = Epoch().Add(st.startedAt + st.readyDelay + rem)
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

package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// A workload the engine rejects is checked, once per node set, against the empty
// cluster of every node the simulation knows (offline ones included, at their current
// layout): when no placement could ever start it, it is marked NeverFits, so explain,
// the event log and the summary say so instead of "may fit later". It stays with the
// engine, parked at no cost, and is checked again after nodes are added or re-laid out.
// Checks are answered per ClusterQueue and shape (engine.NeverFitChecker), so a fleet of
// equal jobs costs one placement on the empty cluster, and only rejected ones are asked.

// neverFitState is the simulator's side of the check.
type neverFitState struct {
	checker *engine.NeverFitChecker // nil until needed, and after the node set changed
	// version counts node-set changes; a workload records the version it was checked at.
	version int
	marked  map[api.WorkloadID]*engine.NeverFit
}

// nodesReshaped drops the answers: nodes were added or re-partitioned, so a marked
// workload may fit now (the engine wakes it; its next rejection is checked again).
func (s *Simulator) nodesReshaped() {
	s.neverFit.checker = nil
	s.neverFit.version++
	clear(s.neverFit.marked)
}

// markNeverFits checks the workloads rejected in a cycle.
func (s *Simulator) markNeverFits(rejections []plan.Rejection) error {
	for _, r := range rejections {
		st := s.wls[r.Workload]
		if st == nil || st.fitChecked == s.neverFit.version+1 {
			continue
		}
		st.fitChecked = s.neverFit.version + 1
		c, err := s.neverFitChecker()
		if err != nil {
			return err
		}
		nf, never := c.Check(st.w)
		if !never {
			continue
		}
		if s.neverFit.marked == nil {
			s.neverFit.marked = map[api.WorkloadID]*engine.NeverFit{}
		}
		s.neverFit.marked[st.id] = &nf
		rec := s.record(st, EvNeverFits)
		rec.Reason, rec.Layer = string(plan.ReasonNeverFits)+": "+nf.Detail(), string(plan.LayerPlacement)
		s.emit(rec)
	}
	return nil
}

// neverFitChecker builds the checker over every known node, in name order.
func (s *Simulator) neverFitChecker() (*engine.NeverFitChecker, error) {
	if s.neverFit.checker != nil {
		return s.neverFit.checker, nil
	}
	nodes := make([]cluster.Node, 0, len(s.specs))
	for _, n := range s.specs {
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	c, err := engine.NewNeverFitChecker(nodes, s.objs)
	if err != nil {
		return nil, fmt.Errorf("simulate: checking which workloads can never run: %w", err)
	}
	s.neverFit.checker = c
	return c, nil
}

// NeverFits lists the pending workloads marked as never fitting, in ID order.
func (s *Simulator) NeverFits() []engine.NeverFit {
	out := make([]engine.NeverFit, 0, len(s.neverFit.marked))
	for id, nf := range s.neverFit.marked {
		if st := s.wls[id]; st != nil && st.phase == plan.Pending {
			out = append(out, *nf)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Workload < out[j].Workload })
	return out
}

// NeverFitsWarning is the one-line warning for workloads the simulation ended with
// that can never run on its cluster; ok is false when there are none.
func NeverFitsWarning(found []engine.NeverFit) (line string, ok bool) {
	if len(found) == 0 {
		return "", false
	}
	ids := make([]string, len(found))
	for i, nf := range found {
		ids[i] = string(nf.Workload)
	}
	shown := ids[:min(len(ids), warnNamesShown)]
	list := strings.Join(shown, ", ")
	if more := len(ids) - len(shown); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	noun := "workloads"
	if len(ids) == 1 {
		noun = "workload"
	}
	return fmt.Sprintf("warning: %d %s can never run on this cluster (NeverFits; gantry explain says why): %s", len(ids), noun, list), true
}

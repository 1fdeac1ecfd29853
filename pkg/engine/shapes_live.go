package engine

import (
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// syncShapes brings the fragmentation scorer's statistics up to the live workloads and
// the world's nodes before a cycle places anything. They are rebuilt from the census (a
// function of what is live, not of arrival order), so a scheduler rebuilt after a restart
// scores as the one it replaced; and queues without a placement policy of their own get
// placement's default for those shapes (bin-packing while no GPU pod is live).
//
// New statistics move the scores, and a gang placed pod by pod goes where the scores
// send it: a gang the nodes refused after some of its pods had taken nodes may fit once
// they are sent elsewhere. Those are woken (scoredOut).
func (s *Scheduler) syncShapes(w World) {
	s.census.Nodes(w.Cluster)
	if !s.census.Fill(s.shapes) {
		return
	}
	s.wakeSet(s.parked.byKind[ParkedNodes], scoredOut)
	if !s.liveDefault {
		return
	}
	if p, ok := s.eng.placer.(*placementLayer); ok {
		p.scorers = placement.DefaultScorersFor(s.shapes)
	}
}

// scoredOut reports whether e's last placement rejection may depend on how the nodes
// were scored: some gang pod took a node before another found none, or a topology
// domain was chosen, under its flavors or a fallback's; or a reservation was looked
// for (the gang was placed on the cluster as each running workload's end would leave
// it). The necessary conditions (NotEnoughFreeGPU, NoRoomForGang) and a first pod that
// no node could take read no score.
func scoredOut(e *entry) bool {
	if !e.hasLast || e.last.Evidence == nil {
		return true
	}
	ev := e.last.Evidence
	if ev.NoStart || placeScored(ev.Place) {
		return true
	}
	for _, f := range ev.Fallbacks {
		if placeScored(f.Place) {
			return true
		}
	}
	return false
}

// placeScored is scoredOut for one placement failure (nil: none).
func placeScored(f *plan.PlaceFailure) bool {
	if f == nil {
		return false
	}
	switch f.Code {
	case plan.ReasonNotEnoughFreeGPU, plan.ReasonNoRoomForGang:
		return false
	}
	d := f.Diagnosis
	return d == nil || d.Placed > 0 || d.Topology != ""
}

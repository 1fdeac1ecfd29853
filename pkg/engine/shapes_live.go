package engine

import "github.com/gantry-sched/gantry/pkg/placement"

// syncShapes brings the fragmentation scorer's statistics up to the live workloads and
// the world's nodes before a cycle places anything. They are rebuilt from the census (a
// function of what is live, not of arrival order), so a scheduler rebuilt after a restart
// scores as the one it replaced; and queues without a placement policy of their own get
// placement's default for those shapes (bin-packing while no GPU pod is live).
func (s *Scheduler) syncShapes(w World) {
	s.census.Nodes(w.Cluster)
	if !s.census.Fill(s.shapes) || !s.liveDefault {
		return
	}
	if p, ok := s.eng.placer.(*placementLayer); ok {
		p.scorers = placement.DefaultScorersFor(s.shapes)
	}
}

package view

import "sort"

// Sort puts the lists of s in the order Snapshot documents: cohorts, queues and nodes
// by name; workloads by ClusterQueue, then the pending ones by queue position, then
// the rest, each group by ID. Drivers call it last, so every front end prints the
// same order.
func (s *Snapshot) Sort() {
	sort.Slice(s.Cohorts, func(i, j int) bool { return s.Cohorts[i].Name < s.Cohorts[j].Name })
	sort.Slice(s.Queues, func(i, j int) bool { return s.Queues[i].Name < s.Queues[j].Name })
	sort.Slice(s.Nodes, func(i, j int) bool { return s.Nodes[i].Name < s.Nodes[j].Name })
	sort.SliceStable(s.Workloads, func(i, j int) bool { return workloadLess(&s.Workloads[i], &s.Workloads[j]) })
}

func workloadLess(a, b *Workload) bool {
	if a.ClusterQueue != b.ClusterQueue {
		return a.ClusterQueue < b.ClusterQueue
	}
	// A position of 0 means "not pending": those come after the queue's pending ones.
	if (a.Position == 0) != (b.Position == 0) {
		return a.Position != 0
	}
	if a.Position != b.Position {
		return a.Position < b.Position
	}
	return a.ID < b.ID
}

package dashboard

import (
	"strconv"

	"github.com/gantry-sched/gantry/pkg/view"
)

// workloadsPage lists, per ClusterQueue, the pending workloads in queue order with why
// they wait, and the admitted and running ones with their nodes.
type workloadsPage struct {
	Queues []queueWorkloads
	// Finished and NotYet count the workloads not listed (done, or a simulation's
	// workloads submitted later).
	Finished, NotYet int
}

type queueWorkloads struct {
	Name    string
	Held    bool
	Pending []pendingRow
	Running []runningRow
}

type pendingRow struct {
	Position                   string
	ID, Owner                  string
	Phase, Priority, Pods, GPU string
	Waited, ETA, ETABasis      string
	Layer, Reason, Remedy      string
	Details                    []string
}

type runningRow struct {
	ID, Owner                  string
	Phase, Priority, Pods, GPU string
	Nodes                      []string
}

// noQueue groups workloads that resolve to no ClusterQueue.
const noQueue = "(no ClusterQueue)"

func buildWorkloads(s view.Snapshot) workloadsPage {
	var p workloadsPage
	index := map[string]int{}
	group := func(name string) *queueWorkloads {
		if name == "" {
			name = noQueue
		}
		i, ok := index[name]
		if !ok {
			i = len(p.Queues)
			index[name] = i
			p.Queues = append(p.Queues, queueWorkloads{Name: name})
		}
		return &p.Queues[i]
	}
	// Every ClusterQueue gets its section, in the snapshot's order, even when empty.
	for _, q := range s.Queues {
		group(q.Name).Held = q.Held
	}
	for _, w := range s.Workloads {
		switch {
		case waiting(w.Phase):
			g := group(w.ClusterQueue)
			g.Pending = append(g.Pending, pendingRowOf(w))
		case w.Phase == view.Admitted || w.Phase == view.Running:
			g := group(w.ClusterQueue)
			g.Running = append(g.Running, runningRow{ID: w.ID, Owner: w.Owner, Phase: string(w.Phase),
				Priority: strconv.Itoa(int(w.Priority)), Pods: strconv.Itoa(w.Pods), GPU: formatGPU(w.GPU), Nodes: w.Nodes})
		case w.Phase == view.Finished:
			p.Finished++
		case w.Phase == view.NotYet:
			p.NotYet++
		}
	}
	return p
}

func pendingRowOf(w view.Workload) pendingRow {
	r := pendingRow{
		ID: w.ID, Owner: w.Owner, Phase: string(w.Phase), Priority: strconv.Itoa(int(w.Priority)),
		Pods: strconv.Itoa(w.Pods), GPU: formatGPU(w.GPU), Waited: formatDuration(w.Waited),
		Layer: w.Layer, Reason: w.Reason, Details: w.Details, Remedy: w.Remedy,
		ETA: "unknown", ETABasis: w.ETABasis,
	}
	if w.Position > 0 {
		r.Position = strconv.Itoa(w.Position)
	}
	if w.ETA != nil {
		r.ETA = "in " + formatDuration(*w.ETA)
	}
	return r
}

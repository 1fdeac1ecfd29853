package engine

import (
	"fmt"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func emptyAssignment() devices.Assignment { return devices.Assignment{} }

// pending wraps a workload in a Pending for ClusterQueue cq, queued when created.
func pending(w *api.Workload, cq string) Pending {
	return Pending{Workload: w, ClusterQueue: cq, Strategy: api.BestEffortFIFO, QueuedAt: w.Created}
}

// snapshotOf returns n nodes "n0".."n<n-1>" with cpu CPUs each.
func snapshotOf(n int, cpu int64) *cluster.Snapshot {
	nodes := make([]cluster.Node, n)
	for i := range nodes {
		nodes[i] = gt.MakeNode(fmt.Sprintf("n%d", i)).CPU(fmt.Sprint(cpu)).Obj()
	}
	s, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		panic(err)
	}
	return s
}

func resourcesCPU(n int64) resources.Amount { return resources.Amount(n * 1000) }

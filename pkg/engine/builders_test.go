package engine

import (
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func emptyAssignment() devices.Assignment { return devices.Assignment{} }

// wlBuilder: MakeWorkload("ns", "a").CPU(2).Pods(3).Priority(5).Obj().
type wlBuilder struct{ w api.Workload }

func MakeWorkload(ns, name string) *wlBuilder {
	return &wlBuilder{w: api.Workload{Meta: api.Meta{Namespace: ns, Name: name, Created: t0}, Queue: "lq",
		PodSets: []api.PodSet{{Name: "main", Count: 1, Requests: resources.Vector{resources.CPU: 1000}}}}}
}
func (b *wlBuilder) CPU(n int64) *wlBuilder {
	b.w.PodSets[0].Requests = resources.Vector{resources.CPU: resources.Amount(n * 1000)}
	return b
}
func (b *wlBuilder) Pods(n int32) *wlBuilder            { b.w.PodSets[0].Count = n; return b }
func (b *wlBuilder) Priority(p int32) *wlBuilder        { b.w.Priority = p; return b }
func (b *wlBuilder) Created(d time.Duration) *wlBuilder { b.w.Created = t0.Add(d); return b }
func (b *wlBuilder) Obj() *api.Workload                 { w := b.w; return &w }

// pending wraps a workload in a Pending for ClusterQueue cq.
func pending(w *api.Workload, cq string) Pending {
	return Pending{Workload: w, ClusterQueue: cq, Strategy: api.BestEffortFIFO, QueuedAt: w.Created}
}

// snapshotOf returns n nodes "n0".."n<n-1>" with cpu CPUs each.
func snapshotOf(n int, cpu int64) *cluster.Snapshot {
	nodes := make([]cluster.Node, n)
	for i := range nodes {
		nodes[i] = cluster.Node{Name: fmt.Sprintf("n%d", i), Ready: true, Allocatable: resources.Vector{resources.CPU: resources.Amount(cpu * 1000)}}
	}
	s, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		panic(err)
	}
	return s
}

func resourcesCPU(n int64) resources.Amount { return resources.Amount(n * 1000) }

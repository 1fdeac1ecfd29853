// Package plans builds engine plans for tests: MakePlan(1).Admit("ns/a",
// "cq").Bind("ns/a", "a-0", "n1", "GPU-0").Obj(). It is apart from package testing
// because pkg/plan imports pkg/admission, whose internal tests use package testing.
package plans

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// PlanWrapper builds a plan.Plan at the Unix epoch.
type PlanWrapper struct{ p plan.Plan }

// MakePlan starts the plan of a cycle.
func MakePlan(cycle int64) *PlanWrapper {
	return &PlanWrapper{p: plan.Plan{Cycle: cycle, At: time.Unix(0, 0).UTC()}}
}

// Admit admits workload id in ClusterQueue cq: one pod of pod set "main" using one
// on-demand GPU.
func (b *PlanWrapper) Admit(id, cq string) *PlanWrapper {
	b.p.Admissions = append(b.p.Admissions, plan.Admission{
		Workload: api.WorkloadID(id), ClusterQueue: cq,
		PodSets: []plan.PodSetAssignment{{Name: "main", Count: 1,
			Flavors: map[resources.Name]string{resources.NvidiaGPU: "on-demand"},
			Usage:   resources.Vector{resources.NvidiaGPU: 1}}},
	})
	return b
}

// Bind binds pod of workload id (pod set "main") to node with the devices.
func (b *PlanWrapper) Bind(id, pod, node string, devs ...string) *PlanWrapper {
	b.p.Bindings = append(b.p.Bindings, plan.Binding{Workload: api.WorkloadID(id), PodSet: "main", Pod: pod, Node: node, Devices: devs})
	return b
}

// Reserve gives workload id a reservation.
func (b *PlanWrapper) Reserve(id string) *PlanWrapper {
	b.p.Reservations = append(b.p.Reservations, plan.Reservation{Workload: api.WorkloadID(id)})
	return b
}

// Reject rejects workload id for quota.
func (b *PlanWrapper) Reject(id string) *PlanWrapper {
	b.p.Rejections = append(b.p.Rejections, plan.Rejection{Workload: api.WorkloadID(id), Layer: plan.LayerAdmission, Reason: plan.ReasonWaitingForQuota})
	return b
}

// Notice gives workload id a preemption notice of grace.
func (b *PlanWrapper) Notice(id string, grace time.Duration) *PlanWrapper {
	b.p.Notices = append(b.p.Notices, plan.Notice{Workload: api.WorkloadID(id), Grace: grace})
	return b
}

// Evict evicts workload id.
func (b *PlanWrapper) Evict(id string) *PlanWrapper {
	b.p.Evictions = append(b.p.Evictions, plan.Eviction{Workload: api.WorkloadID(id)})
	return b
}

// Obj returns the plan.
func (b *PlanWrapper) Obj() plan.Plan { return b.p }

package plan

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// planBuilder builds plans fluently in tests: MakePlan(1).Admit("ns/a", "cq").Bind(...).Obj().
type planBuilder struct{ p Plan }

func MakePlan(cycle int64) *planBuilder {
	return &planBuilder{p: Plan{Cycle: cycle, At: time.Unix(0, 0).UTC()}}
}

func (b *planBuilder) Admit(id, cq string) *planBuilder {
	b.p.Admissions = append(b.p.Admissions, Admission{
		Workload: api.WorkloadID(id), ClusterQueue: cq,
		PodSets: []PodSetAssignment{{Name: "main", Count: 1,
			Flavors: map[resources.Name]string{resources.NvidiaGPU: "on-demand"},
			Usage:   resources.Vector{resources.NvidiaGPU: 1}}},
	})
	return b
}

func (b *planBuilder) Bind(id, pod, node string, devs ...string) *planBuilder {
	b.p.Bindings = append(b.p.Bindings, Binding{Workload: api.WorkloadID(id), PodSet: "main", Pod: pod, Node: node, Devices: devs})
	return b
}

func (b *planBuilder) Reserve(id string) *planBuilder {
	b.p.Reservations = append(b.p.Reservations, Reservation{Workload: api.WorkloadID(id)})
	return b
}

func (b *planBuilder) Reject(id string) *planBuilder {
	b.p.Rejections = append(b.p.Rejections, Rejection{Workload: api.WorkloadID(id), Layer: LayerAdmission, Reason: "QuotaExceeded"})
	return b
}

func (b *planBuilder) Notice(id string, grace time.Duration) *planBuilder {
	b.p.Notices = append(b.p.Notices, Notice{Workload: api.WorkloadID(id), Grace: grace})
	return b
}

func (b *planBuilder) Evict(id string) *planBuilder {
	b.p.Evictions = append(b.p.Evictions, Eviction{Workload: api.WorkloadID(id)})
	return b
}

func (b *planBuilder) Obj() Plan { return b.p }

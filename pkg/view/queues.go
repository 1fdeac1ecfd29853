package view

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
)

// QueueOf is ClusterQueue cq as the quota state q sees it: nominal quota, usage and
// borrowing per flavor and resource, their GPU-equivalents and the weighted fair share.
// Pending and Admitted are the caller's to count. Both drivers call it with the quota
// the engine schedules with.
func QueueOf(q *admission.Quota, cq *api.ClusterQueue) Queue {
	out := Queue{Name: cq.Name, Cohort: cq.Cohort, Held: cq.StopPolicy != "" && cq.StopPolicy != api.StopNone}
	for _, g := range cq.ResourceGroups {
		for _, f := range g.Flavors {
			for _, r := range f.Resources {
				out.Quota = append(out.Quota, QuotaRow{
					Flavor: f.Name, Resource: r.Name, BorrowingLimit: r.BorrowingLimit,
					Nominal:  q.Nominal(cq.Name, f.Name, r.Name),
					Used:     q.Usage(cq.Name, f.Name, r.Name),
					Borrowed: q.Borrowed(cq.Name, f.Name, r.Name),
				})
			}
		}
	}
	out.NominalGPU, out.UsedGPU, out.BorrowedGPU = GPUTotals(out.Quota)
	out.FairShare = q.Share(cq.Name)
	return out
}

// CohortsOf is the cohort tree: the cohorts defined as objects (with their parents)
// and those only named by a ClusterQueue or as a parent (Kueue creates them
// implicitly), each with the ClusterQueues directly under it, sorted by name.
func CohortsOf(defined []api.Cohort, queues []Queue) []Cohort {
	byName := map[string]*Cohort{}
	get := func(name string) *Cohort {
		c := byName[name]
		if c == nil {
			c = &Cohort{Name: name}
			byName[name] = c
		}
		return c
	}
	for _, d := range defined {
		get(d.Name).Parent = d.Parent
		if d.Parent != "" {
			get(d.Parent)
		}
	}
	for _, q := range queues {
		if q.Cohort != "" {
			c := get(q.Cohort)
			c.Queues = append(c.Queues, q.Name)
		}
	}
	out := make([]Cohort, 0, len(byName))
	for _, c := range byName {
		sort.Strings(c.Queues)
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

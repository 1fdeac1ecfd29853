package controller

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Queue objects that change only where no workload lives keep the scheduler (and what
// it parked); any change that can move a decision rebuilds it.
func TestSameForWorkloads(t *testing.T) {
	base := func() *api.Objects {
		return &api.Objects{
			ClusterQueues: []api.ClusterQueue{{Meta: api.Meta{Name: "cq"}}},
			LocalQueues: []api.LocalQueue{{Meta: api.Meta{Name: "lq", Namespace: "team"}, ClusterQueue: "cq"},
				{Meta: api.Meta{Name: "lq", Namespace: "other"}, ClusterQueue: "cq"}},
			Namespaces: []api.Namespace{{Meta: api.Meta{Name: "team"}}, {Meta: api.Meta{Name: "other"}}},
		}
	}
	live := map[string]bool{"team": true}
	cases := []struct {
		name string
		edit func(*api.Objects)
		same bool // want: the scheduler is kept
	}{
		{name: "nothing changed", edit: func(*api.Objects) {}, same: true},
		{name: "a LocalQueue where no workload lives goes", edit: func(o *api.Objects) { o.LocalQueues = o.LocalQueues[:1] }, same: true},
		{name: "a Namespace where no workload lives goes", edit: func(o *api.Objects) { o.Namespaces = o.Namespaces[:1] }, same: true},
		{name: "the workloads' LocalQueue changes", edit: func(o *api.Objects) { o.LocalQueues[0].StopPolicy = api.StopHold }},
		{name: "the workloads' Namespace relabelled", edit: func(o *api.Objects) { o.Namespaces[0].Labels = map[string]string{"tier": "prod"} }},
		{name: "a ClusterQueue changes", edit: func(o *api.Objects) { o.ClusterQueues[0].Cohort = "c" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := base()
			c.edit(b)
			if got := sameForWorkloads(base(), b, live); got != c.same {
				t.Errorf("sameForWorkloads = %v, want %v", got, c.same)
			}
		})
	}
}

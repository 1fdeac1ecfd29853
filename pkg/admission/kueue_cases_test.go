package admission

import (
	"sort"
	"strings"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Helpers for the tables that mirror Kueue's own unit tests (kubernetes-sigs/kueue,
// pkg/scheduler/preemption/preemption_test.go and pkg/scheduler/scheduler_test.go).
// The objects are written anew with Gantry's builders; quantities and names follow the
// Kueue cases so that a reader can put the two side by side.

const (
	cpu = resources.CPU
	mem = resources.Memory
)

// kueueAdmitted is a workload that holds quota before the case starts, with the flavor
// Kueue's case gives it (Kueue's ReserveQuotaAt with an explicit admission).
type kueueAdmitted struct {
	name, cq string
	prio     int32
	created  time.Duration // creation time, after gt.Epoch
	use      []FlavorAmount
}

func adm(name, cq string, prio int32, use ...FlavorAmount) kueueAdmitted {
	return kueueAdmitted{name: name, cq: cq, prio: prio, use: use}
}

// use is an amount of resource r in flavor ("2", "3Gi").
func use(flavor string, r resources.Name, q string) FlavorAmount {
	return FlavorAmount{FlavorResource{flavor, r}, resources.MustParse(r, q)}
}

// workload is the admitted workload as an api.Workload, in its queue's namespace.
func (k kueueAdmitted) workload() *api.Workload {
	return gt.MakeWorkload("ns-"+k.cq, k.name).Priority(k.prio).Created(k.created).Obj()
}

// admitAll records the admitted workloads in order (a later one counts as more recently
// admitted, as a later quota reservation time does in Kueue) with exactly their usage.
// Like Kueue's ReserveQuotaAt it does not check the quota: some Kueue cases start from
// a cohort using more than it has (e.g. after a quota was lowered).
func admitAll(t *testing.T, q *Quota, ws []kueueAdmitted) {
	t.Helper()
	for _, k := range ws {
		wl := k.workload()
		cq, ok := q.s.cqID(k.cq)
		if !ok {
			t.Fatalf("admit %s: no clusterqueue %q", wl.ID(), k.cq)
		}
		cells, err := q.s.cells(k.use)
		if err != nil {
			t.Fatalf("admit %s: %v", wl.ID(), err)
		}
		q.seq++
		q.record(&AdmittedWorkload{ID: wl.ID(), ClusterQueue: k.cq, LocalQueue: wl.Namespace + "/" + wl.Queue,
			Priority: wl.Priority, Created: wl.Created, Seq: q.seq, Usage: k.use, cq: cq, cells: cells})
	}
}

// kueueFlavors are the flavors of Kueue's TestPreemption.
func kueueFlavors() []api.ResourceFlavor {
	return []api.ResourceFlavor{gt.MakeFlavor("default").Obj(), gt.MakeFlavor("alpha").Obj(), gt.MakeFlavor("beta").Obj()}
}

// victimNames maps the preempted workloads' names to the rule that chose them.
func victimNames(r PreemptionResult) map[string]VictimReason {
	out := map[string]VictimReason{}
	for _, v := range r.Victims {
		_, name, _ := strings.Cut(string(v.Workload), "/")
		out[name] = v.Reason
	}
	return out
}

func sameVictims(got, want map[string]VictimReason) bool {
	if len(got) != len(want) {
		return false
	}
	for n, r := range want {
		if got[n] != r {
			return false
		}
	}
	return true
}

func sortedNames(m map[string]VictimReason) []string {
	var out []string
	for n, r := range m {
		out = append(out, n+"("+string(r)+")")
	}
	sort.Strings(out)
	return out
}

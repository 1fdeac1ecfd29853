package admission

import (
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// gpu is the resource most quotas here are written on.
const gpu = resources.NvidiaGPU

// admitter does with admission what the engine's cycle does for one workload: resolve
// its LocalQueue (Resolver), rate it against the live quota tree (Quota.Assign) and, once
// placement has confirmed, record the admission (Quota.Admit). Queue ordering is the
// engine's and is tested there.
type admitter struct {
	*Quota
	res *Resolver
}

// fataler is what the helpers need of *testing.T and *rapid.T alike.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func newAdmitter(t fataler, objs *api.Objects, opts Options) *admitter {
	t.Helper()
	q, err := NewQuota(objs, opts)
	if err != nil {
		t.Fatalf("NewQuota: %v", err)
	}
	r, err := NewResolver(objs)
	if err != nil {
		t.Fatalf("NewResolver: %v", err)
	}
	return &admitter{Quota: q, res: r}
}

// assign rates wl in the ClusterQueue its LocalQueue points at; a queue that does not
// resolve comes back as a NoFit assignment with the Resolver's reason code.
func (m *admitter) assign(wl *api.Workload) Assignment {
	r := m.res.Resolve(wl)
	if !r.OK() {
		return Assignment{Workload: wl.ID(), ClusterQueue: r.ClusterQueue, Code: r.Code, Message: r.Message}
	}
	return m.Assign(wl, r.ClusterQueue)
}

// mustAdmit requires wl to be assigned with mode want and admits it.
func mustAdmit(t testing.TB, m *admitter, wl *api.Workload, want Mode) Assignment {
	t.Helper()
	a := m.assign(wl)
	if a.Mode != want {
		t.Fatalf("Assign %s: mode %s, want %s (%s; %+v)", wl.ID(), a.Mode, want, a.Message, a.PodSets)
	}
	if err := m.Admit(wl, a); err != nil {
		t.Fatalf("Admit %s: %v", wl.ID(), err)
	}
	return a
}

func victimIDs(r PreemptionResult) []api.WorkloadID {
	var out []api.WorkloadID
	for _, v := range r.Victims {
		out = append(out, v.Workload)
	}
	return out
}

func sameIDs(a, b []api.WorkloadID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func durationNS(n int64) time.Duration { return time.Duration(n) }

// gpuCQ is a ClusterQueue with 8 GPUs of flavor h100.
func gpuCQ(name string) *gt.ClusterQueueWrapper {
	return gt.MakeClusterQueue(name).ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "8").Obj())
}

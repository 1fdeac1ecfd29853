package admission

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
)

func newManager(t testing.TB, objs *api.Objects, opts Options) *Manager {
	t.Helper()
	m, err := NewManager(objs, opts)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	return m
}

// mustAdmit queues wl, requires it to fit with mode want and admits it.
func mustAdmit(t testing.TB, m *Manager, wl *api.Workload, want Mode) Assignment {
	t.Helper()
	if _, err := m.Add(wl); err != nil {
		t.Fatalf("Add %s: %v", wl.ID(), err)
	}
	a := m.Assign(wl)
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

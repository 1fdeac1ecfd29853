package admission

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
)

// A quota change rebuilds the tree with the admitted workloads' usage carried over, so
// what waited for quota fits under a raised quota; a change naming a missing
// ClusterQueue or flavor is an error and changes nothing. (That a change wakes parked
// workloads is the engine's: Scheduler.QuotaChanged.)
func TestQuotaChangeKeepsUsage(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).Obj()
	m := newAdmitter(t, objs, Options{})
	mustAdmit(t, m, gt.MakeWorkload("ns-a", "running").Request(gpu, "6").Obj(), Fit)
	w := gt.MakeWorkload("ns-a", "w").Request(gpu, "6").Obj()
	if a := m.assign(w); a.Code != WaitingForQuota {
		t.Fatalf("before the change: %s (%s), want WaitingForQuota", a.Code, a.Message)
	}
	grow := []api.ResourceGroup{gt.ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "16").Obj())}
	q, err := m.WithResourceGroups("a", grow)
	if err != nil {
		t.Fatal(err)
	}
	m.Quota = q
	if got := m.Usage("a", "h100", gpu); got != 6 {
		t.Fatalf("usage after the change %d, want 6 carried over", got)
	}
	mustAdmit(t, m, w, Fit)
	if _, err := m.WithResourceGroups("ghost", grow); err == nil {
		t.Fatal("quota change for a missing clusterqueue accepted")
	}
	bad := []api.ResourceGroup{gt.ResourceGroup(gt.MakeFlavorQuotas("nope").Resource(gpu, "1").Obj())}
	if _, err := m.WithResourceGroups("a", bad); err == nil || m.Nominal("a", "h100", gpu) != 16 {
		t.Fatalf("bad change: err %v, nominal %d; want an error and nothing changed", err, m.Nominal("a", "h100", gpu))
	}
}

func TestLoweredQuotaKeepsAdmittedWorkloads(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).Obj()
	m := newAdmitter(t, objs, Options{})
	mustAdmit(t, m, gt.MakeWorkload("ns-a", "running").Request(gpu, "6").Obj(), Fit)
	old := m.Quota
	shrink := []api.ResourceGroup{gt.ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "2").Obj())}
	q, err := old.WithResourceGroups("a", shrink)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := q.Admitted("ns-a/running"); !ok || q.Usage("a", "h100", gpu) != 6 || q.Nominal("a", "h100", gpu) != 2 {
		t.Fatalf("after shrinking: usage %d nominal %d; want the workload kept with usage 6 over nominal 2", q.Usage("a", "h100", gpu), q.Nominal("a", "h100", gpu))
	}
	if old.Nominal("a", "h100", gpu) != 8 {
		t.Fatal("WithResourceGroups changed the original quota")
	}
	if a := q.Assign(gt.MakeWorkload("ns-a", "w").Request(gpu, "1").Obj(), "a"); a.Fits() {
		t.Fatalf("a queue over its lowered quota admitted more: %s", a)
	}
}

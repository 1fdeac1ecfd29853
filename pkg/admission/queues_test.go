package admission

import (
	"fmt"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
)

func gpuCQ(name string) *cqBuilder {
	return MakeClusterQueue(name).ResourceGroup(MakeFlavorQuotas("h100").Resource(gpu, "8").Obj())
}

func TestQueueReasonCodes(t *testing.T) {
	tests := []struct {
		name string
		objs *api.Objects
		wl   *api.Workload
		// want is the status code right after Add, and wantAssign Assign's code.
		want, wantAssign ReasonCode
	}{
		{
			name: "missing LocalQueue",
			objs: MakeObjects().Flavors(MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).Obj(),
			wl:   MakeWorkload("ns-a", "w").Queue("nope").Request(gpu, "1").Obj(),
			want: QueueMissing, wantAssign: QueueMissing,
		},
		{
			name: "LocalQueue points at a missing ClusterQueue",
			objs: MakeObjects().Flavors(MakeFlavor("h100").Obj()).LocalQueues(MakeLocalQueue("ns", "lq", "ghost").Obj()).Obj(),
			wl:   MakeWorkload("ns", "w").Request(gpu, "1").Obj(),
			want: ClusterQueueMissing, wantAssign: ClusterQueueMissing,
		},
		{
			name: "namespace not selected",
			objs: MakeObjects().Flavors(MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").NamespaceSelector(map[string]string{"team": "ml"}).Obj()).
				Namespace("ns-a", map[string]string{"team": "web"}).Obj(),
			wl:   MakeWorkload("ns-a", "w").Request(gpu, "1").Obj(),
			want: NamespaceNotSelected, wantAssign: NamespaceNotSelected,
		},
		{
			name: "namespace selected",
			objs: MakeObjects().Flavors(MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").NamespaceSelector(map[string]string{"team": "ml"}).Obj()).
				Namespace("ns-a", map[string]string{"team": "ml"}).Obj(),
			wl:   MakeWorkload("ns-a", "w").Request(gpu, "1").Obj(),
			want: ReasonNone, wantAssign: ReasonNone,
		},
		{
			name: "ClusterQueue held",
			objs: MakeObjects().Flavors(MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Stop(api.StopHold).Obj()).Obj(),
			wl:   MakeWorkload("ns-a", "w").Request(gpu, "1").Obj(),
			want: QueueHeld, wantAssign: QueueHeld,
		},
		{
			name: "LocalQueue held",
			objs: MakeObjects().Flavors(MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).
				LocalQueues(MakeLocalQueue("ns-a", "held", "a").Stop(api.StopHold).Obj()).Obj(),
			wl:   MakeWorkload("ns-a", "w").Queue("held").Request(gpu, "1").Obj(),
			want: QueueHeld, wantAssign: QueueHeld,
		},
		{
			name: "resource no group covers",
			objs: MakeObjects().Flavors(MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).Obj(),
			wl:   MakeWorkload("ns-a", "w").Request(gpu, "1").Request("cpu", "4").Obj(),
			want: ReasonNone, wantAssign: ResourceNotCovered,
		},
		{
			name: "no pod sets",
			objs: MakeObjects().Flavors(MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).Obj(),
			wl:   &api.Workload{Meta: api.Meta{Name: "w", Namespace: "ns-a"}, Queue: "lq"},
			want: ReasonNone, wantAssign: InvalidWorkload,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, tt.objs, Options{})
			st, err := m.Add(tt.wl)
			if err != nil {
				t.Fatal(err)
			}
			if st, _ = m.Status(tt.wl.ID()); st.Code != tt.want {
				t.Fatalf("status %s (%s), want %s", st.Code, st.Message, tt.want)
			}
			if a := m.Assign(tt.wl); a.Code != tt.wantAssign {
				t.Fatalf("assign code %s (%s), want %s", a.Code, a.Message, tt.wantAssign)
			}
			if tt.want != ReasonNone && tt.want != QueueHeld {
				if heads := m.Heads(); len(heads) != 0 {
					t.Fatalf("heads %v, want none", heads)
				}
			}
		})
	}
}

func TestHeldQueueHasNoHeadAndDrains(t *testing.T) {
	objs := MakeObjects().Flavors(MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Stop(api.StopHoldAndDrain).Obj(), gpuCQ("b").Obj()).Obj()
	m := newManager(t, objs, Options{})
	// Admitted before the hold (the quota layer itself does not look at stop policies).
	running := MakeWorkload("ns-a", "running").Request(gpu, "1").Obj()
	if err := m.Admit(running, m.Quota().Assign(running, "a")); err != nil {
		t.Fatal(err)
	}
	mustAdmit(t, m, MakeWorkload("ns-b", "running").Request(gpu, "1").Obj(), Fit)
	if _, err := m.Add(MakeWorkload("ns-a", "w").Request(gpu, "1").Obj()); err != nil {
		t.Fatal(err)
	}
	if heads := m.Heads(); len(heads) != 0 {
		t.Fatalf("heads %v, want none from a held queue", heads)
	}
	if got := m.ToDrain(); len(got) != 1 || got[0] != "ns-a/running" {
		t.Fatalf("ToDrain %v, want [ns-a/running]", got)
	}
}

func TestRequeueWakesOnlyTheCohortTree(t *testing.T) {
	objs := MakeObjects().Flavors(MakeFlavor("h100").Obj()).ClusterQueues(
		gpuCQ("a").Cohort("c1").Obj(), gpuCQ("b").Cohort("c1").Obj(), gpuCQ("x").Cohort("c2").Obj()).Obj()
	m := newManager(t, objs, Options{})
	for _, ns := range []string{"ns-a", "ns-b", "ns-x"} {
		w := MakeWorkload(ns, "w").Request(gpu, "1").Obj()
		if _, err := m.Add(w); err != nil {
			t.Fatal(err)
		}
		m.SetInadmissible(w.ID(), WaitingForQuota, "test")
	}
	if heads := m.Heads(); len(heads) != 0 {
		t.Fatalf("heads %v, want none while all are inadmissible", heads)
	}
	if n := m.Requeue(RequeueEvent{Reason: CapacityFreed, ClusterQueue: "a"}); n != 2 {
		t.Fatalf("woke %d, want 2 (a and b share cohort c1)", n)
	}
	if st, _ := m.Status("ns-x/w"); st.Code != WaitingForQuota {
		t.Fatalf("x status %s, want it still WaitingForQuota", st.Code)
	}
	if n := m.Requeue(RequeueEvent{Reason: ClusterChanged}); n != 1 {
		t.Fatalf("cluster-wide requeue woke %d, want 1", n)
	}
}

func TestStrictFIFOUnblocksForAnEarlierArrival(t *testing.T) {
	objs := MakeObjects().Flavors(MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Strategy(api.StrictFIFO).Obj()).Obj()
	m := newManager(t, objs, Options{})
	big := MakeWorkload("ns-a", "big").Request(gpu, "9").Obj()
	if _, err := m.Add(big); err != nil {
		t.Fatal(err)
	}
	m.SetInadmissible(big.ID(), ExceedsMaxQuota, "too big")
	later := MakeWorkload("ns-a", "later").CreatedAt(5).Request(gpu, "1").Obj()
	if _, err := m.Add(later); err != nil {
		t.Fatal(err)
	}
	if heads := m.Heads(); len(heads) != 0 {
		t.Fatalf("heads %v: an arrival behind the blocked head must not unblock the queue", heads)
	}
	if st, _ := m.Status(later.ID()); st.Code != BlockedByHead {
		t.Fatalf("later: %s, want BlockedByHead", st.Code)
	}
	urgent := MakeWorkload("ns-a", "urgent").Priority(10).Request(gpu, "1").Obj()
	if _, err := m.Add(urgent); err != nil {
		t.Fatal(err)
	}
	if heads := m.Heads(); len(heads) != 1 || heads[0].Workload.ID() != urgent.ID() {
		t.Fatalf("heads %v, want the higher-priority arrival", heads)
	}
	if st, _ := m.Status(big.ID()); st.Code != ReasonNone {
		t.Fatalf("big after unblocking: %s, want its old reason dropped", st.Code)
	}
}

func TestAdmissionFairSharingAcrossLocalQueues(t *testing.T) {
	objs := MakeObjects().Flavors(MakeFlavor("h100").Obj()).
		ClusterQueues(gpuCQ("a").AdmissionFairSharing(time.Hour).Obj()).
		LocalQueues(MakeLocalQueue("team", "heavy", "a").Obj(), MakeLocalQueue("team", "light", "a").Obj()).Obj()
	m := newManager(t, objs, Options{AdmissionPenalty: time.Hour})
	m.Tick(t0)
	mustAdmit(t, m, MakeWorkload("team", "h1").Queue("heavy").Request(gpu, "4").Obj(), Fit)
	// The entry penalty charges one hour of 4 GPUs at once.
	const hour4 = 4000 * 3600
	if got := m.LocalQueueUsage("team/heavy"); got != hour4 {
		t.Fatalf("heavy usage %d after admission, want the penalty %d", got, hour4)
	}
	m.Tick(t0.Add(time.Hour))
	// The penalty halved by one half-life, plus one hour of 4 GPUs.
	if got := m.LocalQueueUsage("team/heavy"); got != hour4/2+hour4 {
		t.Fatalf("heavy usage %d, want %d", got, hour4/2+hour4)
	}
	// The heavy queue's workload is older and higher priority; the light queue still goes first.
	for _, w := range []*api.Workload{
		MakeWorkload("team", "h2").Queue("heavy").Priority(5).CreatedAt(1).Request(gpu, "1").Obj(),
		MakeWorkload("team", "l1").Queue("light").CreatedAt(2).Request(gpu, "1").Obj(),
	} {
		if _, err := m.Add(w); err != nil {
			t.Fatal(err)
		}
	}
	if heads := m.Heads(); len(heads) != 1 || heads[0].Workload.ID() != "team/l1" {
		t.Fatalf("heads %v, want team/l1", heads)
	}
}

func TestQueueOrderPriorityThenAge(t *testing.T) {
	objs := MakeObjects().Flavors(MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).Obj()
	m := newManager(t, objs, Options{})
	order := []*api.Workload{
		MakeWorkload("ns-a", "old-low").Priority(0).CreatedAt(1).Request(gpu, "1").Obj(),
		MakeWorkload("ns-a", "new-high").Priority(5).CreatedAt(9).Request(gpu, "1").Obj(),
		MakeWorkload("ns-a", "old-high").Priority(5).CreatedAt(2).Request(gpu, "1").Obj(),
	}
	for _, w := range order {
		if _, err := m.Add(w); err != nil {
			t.Fatal(err)
		}
	}
	want := []api.WorkloadID{"ns-a/old-high", "ns-a/new-high", "ns-a/old-low"}
	for _, id := range want {
		heads := m.Heads()
		if len(heads) != 1 || heads[0].Workload.ID() != id {
			t.Fatalf("head %v, want %s", heads, id)
		}
		mustAdmitPending(t, m, heads[0].Workload)
	}
}

func mustAdmitPending(t *testing.T, m *Manager, wl *api.Workload) {
	t.Helper()
	a := m.Assign(wl)
	if err := m.Admit(wl, a); err != nil {
		t.Fatal(err)
	}
	if _, pending := m.Status(wl.ID()); pending {
		t.Fatalf("%s still pending after Admit", wl.ID())
	}
}

func TestAddTwiceIsAnError(t *testing.T) {
	objs := MakeObjects().Flavors(MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).Obj()
	m := newManager(t, objs, Options{})
	w := MakeWorkload("ns-a", "w").Request(gpu, "1").Obj()
	if _, err := m.Add(w); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(w); err == nil {
		t.Fatal("second Add succeeded, want an error")
	}
}

func TestQuotaChangeKeepsUsageAndRequeues(t *testing.T) {
	objs := MakeObjects().Flavors(MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).Obj()
	m := newManager(t, objs, Options{})
	mustAdmit(t, m, MakeWorkload("ns-a", "running").Request(gpu, "6").Obj(), Fit)
	w := MakeWorkload("ns-a", "w").Request(gpu, "6").Obj()
	if _, err := m.Add(w); err != nil {
		t.Fatal(err)
	}
	m.SetInadmissible(w.ID(), WaitingForQuota, "8 GPUs")
	grow := []api.ResourceGroup{group([]api.FlavorQuotas{MakeFlavorQuotas("h100").Resource(gpu, "16").Obj()})}
	if err := m.SetResourceGroups("a", grow); err != nil {
		t.Fatal(err)
	}
	if got := m.Quota().Usage("a", "h100", gpu); got != 6 {
		t.Fatalf("usage after the change %d, want 6 carried over", got)
	}
	if heads := m.Heads(); len(heads) != 1 || heads[0].Workload.ID() != w.ID() {
		t.Fatalf("heads %v, want the requeued workload", heads)
	}
	mustAdmitPending(t, m, w)
	if err := m.SetResourceGroups("ghost", grow); err == nil {
		t.Fatal("quota change for a missing clusterqueue accepted")
	}
	bad := []api.ResourceGroup{group([]api.FlavorQuotas{MakeFlavorQuotas("nope").Resource(gpu, "1").Obj()})}
	if err := m.SetResourceGroups("a", bad); err == nil || m.Quota().Nominal("a", "h100", gpu) != 16 {
		t.Fatalf("bad change: err %v, nominal %d; want an error and nothing changed", err, m.Quota().Nominal("a", "h100", gpu))
	}
}

func TestLoweredQuotaKeepsAdmittedWorkloads(t *testing.T) {
	objs := MakeObjects().Flavors(MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).Obj()
	m := newManager(t, objs, Options{})
	mustAdmit(t, m, MakeWorkload("ns-a", "running").Request(gpu, "6").Obj(), Fit)
	old := m.Quota()
	shrink := []api.ResourceGroup{group([]api.FlavorQuotas{MakeFlavorQuotas("h100").Resource(gpu, "2").Obj()})}
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
	if a := q.Assign(MakeWorkload("ns-a", "w").Request(gpu, "1").Obj(), "a"); a.Fits() {
		t.Fatalf("a queue over its lowered quota admitted more: %s", a)
	}
}

func TestAdmissionPenaltyAlternatesLocalQueues(t *testing.T) {
	objs := MakeObjects().Flavors(MakeFlavor("h100").Obj()).
		ClusterQueues(gpuCQ("a").AdmissionFairSharing(time.Hour).Obj()).
		LocalQueues(MakeLocalQueue("team", "x", "a").Obj(), MakeLocalQueue("team", "y", "a").Obj()).Obj()
	m := newManager(t, objs, Options{})
	for i, lq := range []string{"x", "x", "y", "y"} {
		if _, err := m.Add(MakeWorkload("team", fmt.Sprintf("%s%d", lq, i)).Queue(lq).CreatedAt(i).Request(gpu, "1").Obj()); err != nil {
			t.Fatal(err)
		}
	}
	// Without ticks in between, admissions still alternate between the two queues.
	var got []string
	for i := 0; i < 4; i++ {
		h := m.Heads()[0]
		got = append(got, h.LocalQueue)
		mustAdmitPending(t, m, h.Workload)
	}
	if want := []string{"team/x", "team/y", "team/x", "team/y"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("admission order %v, want %v", got, want)
	}
}

func TestFrequentTicksLoseNoUsage(t *testing.T) {
	objs := MakeObjects().Flavors(MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").AdmissionFairSharing(0).Obj()).Obj()
	m := newManager(t, objs, Options{AdmissionPenalty: time.Second})
	m.Tick(t0)
	mustAdmit(t, m, MakeWorkload("ns-a", "w").Request(gpu, "1").Obj(), Fit)
	for i := 1; i <= 10; i++ {
		m.Tick(t0.Add(time.Duration(i) * 100 * time.Millisecond))
	}
	// One second of penalty plus ten ticks of 100ms, one GPU each: 2000 milli-GPU-seconds.
	if got := m.LocalQueueUsage("ns-a/lq"); got != 2000 {
		t.Fatalf("usage %d, want 2000", got)
	}
}

package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
)

// provCheck makes ClusterQueue cq require AdmissionCheck "prov", a ProvisioningRequest
// check of class with retry, run for onFlavors (all when none).
func (b *world) provCheck(cq, class string, retry api.ProvisioningRetry, onFlavors ...string) *world {
	ac := &b.o.AdmissionChecks
	ac.Checks = append(ac.Checks, api.AdmissionCheck{Meta: api.Meta{Name: "prov"}, ControllerName: api.ProvisioningRequestControllerName, Config: "prov-config"})
	ac.Configs = append(ac.Configs, api.ProvisioningRequestConfig{Meta: api.Meta{Name: "prov-config"}, ClassName: class, Retry: retry})
	ac.ByClusterQueue = map[string][]api.ClusterQueueCheck{cq: {{Name: "prov", OnFlavors: onFlavors}}}
	return b
}

// autoscale marks pool as autoscaled up to max nodes, new nodes joining after delay.
func (b *world) autoscale(pool, max, delay string) *world {
	for i := range b.o.NodePools {
		if b.o.NodePools[i].Name == pool {
			b.o.NodePools[i].Annotations = map[string]string{api.AnnotationAutoscaleMax: max, api.AnnotationProvisionDelay: delay}
		}
	}
	return b
}

func runChecks(t *testing.T, objs *api.Objects) (*Simulator, []EventRecord) {
	t.Helper()
	s, err := New(objs, Options{KeepLog: true, Policy: engine.DefaultPolicy(), Until: 6 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	return s, s.Log()
}

// checkReasons are the admission check records of wl, in order.
func checkReasons(log []EventRecord, wl string) []string {
	var out []string
	for _, r := range log {
		if r.Workload == wl && r.Event == EvAdmissionCheck {
			out = append(out, r.Reason)
		}
	}
	return out
}

func durations(ds ...time.Duration) []time.Duration { return ds }

func TestProvisioningRequestScaleUp(t *testing.T) {
	retry := api.DefaultProvisioningRetry()
	objs := MakeWorld().Pool("gpu", 1, 8, api.CapacityOnDemand).Queue("cq", 32, "gpu").
		autoscale("gpu", "4", "5m").provCheck("cq", api.ProvisioningClassAtomicScaleUp, retry).
		Job("big", 3, 8, 0, time.Hour, 0).Obj()
	_, log := runChecks(t, objs)
	if got := timesOf(log, "ns/big", EvQuotaReserved); !sameTimes(got, durations(0)) {
		t.Errorf("quota reserved at %v, want [0s]", got)
	}
	if got := timesOf(log, "ns/big", EvPlaced); !sameTimes(got, durations(5*time.Minute)) {
		t.Errorf("placed at %v, want [5m0s]: only once the provisioned nodes joined", got)
	}
	if got := timesOf(log, "ns/big", EvFinished); !sameTimes(got, durations(65*time.Minute)) {
		t.Errorf("finished at %v, want [1h5m0s]", got)
	}
	reasons := strings.Join(checkReasons(log, "ns/big"), "\n")
	for _, want := range []string{"ProvisioningRequest big-prov-1", "3 node(s) of pool gpu requested", "Ready"} {
		if !strings.Contains(reasons, want) {
			t.Errorf("check records lack %q:\n%s", want, reasons)
		}
	}
	added := 0
	for _, r := range log {
		if r.Event == EvNode && r.Change == "added" {
			added++
			if r.T.Duration() != 5*time.Minute {
				t.Errorf("node %s added at %s, want 5m", r.Node, FormatDuration(r.T))
			}
		}
	}
	if added != 3 {
		t.Errorf("%d nodes added, want 3 (the whole gang on new nodes, max 4)", added)
	}
}

// TestProvisioningRequestQuotaHeld: the reservation counts against quota while the
// check runs, so a later job of the same queue waits although a node is free.
func TestProvisioningRequestQuotaHeld(t *testing.T) {
	objs := MakeWorld().Pool("gpu", 1, 8, api.CapacityOnDemand).Queue("cq", 24, "gpu").
		autoscale("gpu", "4", "5m").provCheck("cq", api.ProvisioningClassAtomicScaleUp, api.DefaultProvisioningRetry()).
		Job("big", 3, 8, 0, time.Hour, 0).Job("small", 1, 8, time.Minute, time.Hour, 0).Obj()
	_, log := runChecks(t, objs)
	bigEnd := timesOf(log, "ns/big", EvFinished)
	smallRes := timesOf(log, "ns/small", EvQuotaReserved)
	if len(bigEnd) != 1 || len(smallRes) == 0 || smallRes[0] < bigEnd[0] {
		t.Errorf("small reserved quota at %v, big finished at %v: small must wait for big's quota", smallRes, bigEnd)
	}
}

// TestProvisioningRequestRetryThenReject: a request no pool can serve fails; the
// workload retries after the config's backoff, and past backoffLimitCount the check is
// Rejected and the workload is not tried again.
func TestProvisioningRequestRetryThenReject(t *testing.T) {
	retry := api.ProvisioningRetry{BackoffLimitCount: 2, BackoffBase: time.Minute, BackoffMax: 10 * time.Minute}
	objs := MakeWorld().Pool("gpu", 1, 8, api.CapacityOnDemand).Queue("cq", 32, "gpu").
		autoscale("gpu", "2", "5m").provCheck("cq", api.ProvisioningClassAtomicScaleUp, retry).
		Job("big", 3, 8, 0, time.Hour, 0).Obj()
	s, log := runChecks(t, objs)
	// Attempt 1 fails at 0 (wait 1m), attempt 2 at 1m (wait 2m), attempt 3 at 3m: past
	// the limit of 2 retries.
	if got := timesOf(log, "ns/big", EvQuotaReserved); !sameTimes(got, durations(0, time.Minute, 3*time.Minute)) {
		t.Errorf("quota reserved at %v, want [0s 1m0s 3m0s]", got)
	}
	if got := timesOf(log, "ns/big", EvPlaced); len(got) != 0 {
		t.Errorf("placed at %v: no pool can hold the gang", got)
	}
	reasons := checkReasons(log, "ns/big")
	if len(reasons) != 3 || !strings.Contains(reasons[0], "big-prov-1): Retry") || !strings.Contains(reasons[2], "big-prov-3): Rejected") {
		t.Errorf("check records:\n%s\nwant Retry for big-prov-1 ... Rejected for big-prov-3", strings.Join(reasons, "\n"))
	}
	e, err := s.Explain("ns/big")
	if err != nil || e.Reason != ReasonAdmissionCheck || len(e.Details) == 0 || !strings.Contains(e.Details[0], "rejected the workload") {
		t.Errorf("explain = %+v (%v), want the Rejected check", e, err)
	}
	if park := s.sched.Parked("ns/big"); park != engine.ParkedLimit {
		t.Errorf("parked as %s, want deactivated (%s)", park, engine.ParkedLimit)
	}
}

func TestProvisioningRequestCheckCapacity(t *testing.T) {
	tests := []struct {
		name       string
		pods       int32
		wantPlaced []time.Duration
		wantState  string
	}{
		{"fits the free capacity: Ready at once", 2, durations(0), "Ready"},
		{"does not fit: Failed, retried", 3, nil, "Retry"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			retry := api.ProvisioningRetry{BackoffLimitCount: 1, BackoffBase: time.Minute, BackoffMax: time.Minute}
			objs := MakeWorld().Pool("gpu", 2, 8, api.CapacityOnDemand).Queue("cq", 32, "gpu").
				autoscale("gpu", "8", "5m").provCheck("cq", api.ProvisioningClassCheckCapacity, retry).
				Job("j", tc.pods, 8, 0, time.Hour, 0).Obj()
			_, log := runChecks(t, objs)
			if got := timesOf(log, "ns/j", EvPlaced); !sameTimes(got, tc.wantPlaced) {
				t.Errorf("placed at %v, want %v", got, tc.wantPlaced)
			}
			reasons := checkReasons(log, "ns/j")
			if len(reasons) == 0 || !strings.Contains(reasons[0], tc.wantState) {
				t.Errorf("check records %q, want the first to say %s", reasons, tc.wantState)
			}
			for _, r := range log {
				if r.Event == EvNode && r.Change == "added" {
					t.Errorf("node %s added: check-capacity adds no nodes", r.Node)
				}
			}
		})
	}
}

// TestProvisioningRequestOnFlavors: a check for another flavor does not run.
func TestProvisioningRequestOnFlavors(t *testing.T) {
	objs := MakeWorld().Pool("gpu", 1, 8, api.CapacityOnDemand).Pool("spare", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "gpu").
		provCheck("cq", api.ProvisioningClassAtomicScaleUp, api.DefaultProvisioningRetry(), "spare").
		Job("j", 1, 8, 0, time.Hour, 0).Obj()
	_, log := runChecks(t, objs)
	if got := timesOf(log, "ns/j", EvPlaced); !sameTimes(got, durations(0)) {
		t.Errorf("placed at %v, want [0s]", got)
	}
	if got := timesOf(log, "ns/j", EvQuotaReserved); len(got) != 0 {
		t.Errorf("quota reserved for checks at %v: the check runs only on flavor spare", got)
	}
}

// TestProvisioningReservationPreempted: a higher-priority job preempts a workload that
// holds only a quota reservation; it leaves at once, its request's nodes are not added,
// and the preemptor's own request gets them.
func TestProvisioningReservationPreempted(t *testing.T) {
	objs := MakeWorld().Pool("gpu", 1, 8, api.CapacityOnDemand).Queue("cq", 24, "gpu").
		autoscale("gpu", "4", "5m").provCheck("cq", api.ProvisioningClassAtomicScaleUp, api.DefaultProvisioningRetry()).
		Job("low", 3, 8, 0, time.Hour, 0).Job("high", 3, 8, time.Minute, time.Hour, 0).Priority("high", 10).Obj()
	_, log := runChecks(t, objs)
	if got := timesOf(log, "ns/low", EvPreempted); !sameTimes(got, durations(time.Minute)) {
		t.Errorf("low preempted at %v, want [1m0s]", got)
	}
	if got := timesOf(log, "ns/high", EvPlaced); !sameTimes(got, durations(6*time.Minute)) {
		t.Errorf("high placed at %v, want [6m0s] (its own request, 5m after it)", got)
	}
	if got := timesOf(log, "ns/low", EvPlaced); len(got) == 0 || got[0] < 61*time.Minute {
		t.Errorf("low placed at %v, want after high finished at 1h1m", got)
	}
}

func TestProvisioningDeterministic(t *testing.T) {
	build := func() *api.Objects {
		return MakeWorld().Pool("gpu", 1, 8, api.CapacityOnDemand).Queue("cq", 24, "gpu").
			autoscale("gpu", "4", "5m").provCheck("cq", api.ProvisioningClassAtomicScaleUp, api.DefaultProvisioningRetry()).
			Job("big", 3, 8, 0, time.Hour, 0).Job("small", 1, 8, time.Minute, time.Hour, 0).Obj()
	}
	_, a := runLog(t, build(), 7)
	_, b := runLog(t, build(), 7)
	if string(a) != string(b) {
		t.Error("two runs of the same inputs wrote different logs")
	}
}

func TestAutoscaledPoolAnnotations(t *testing.T) {
	tests := []struct {
		name, max, delay, want string
	}{
		{"max not a number", "many", "5m", `gantry.dev/autoscale-max: "many"`},
		{"max below count", "0", "5m", "below the pool's count 1"},
		{"bad delay", "4", "soon", `gantry.dev/provision-delay: "soon"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := MakeWorld().Pool("gpu", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "gpu").autoscale("gpu", tc.max, tc.delay).Obj()
			_, err := New(objs, Options{Policy: engine.DefaultPolicy()})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "NodePool gpu") {
				t.Errorf("New() = %v, want an error naming NodePool gpu and %q", err, tc.want)
			}
		})
	}
}

func TestExplainAdmissionCheck(t *testing.T) {
	objs := MakeWorld().Pool("gpu", 1, 8, api.CapacityOnDemand).Queue("cq", 32, "gpu").
		autoscale("gpu", "4", "5m").provCheck("cq", api.ProvisioningClassAtomicScaleUp, api.DefaultProvisioningRetry()).
		Job("big", 3, 8, 0, time.Hour, 0).Obj()
	s, err := New(objs, Options{Policy: engine.DefaultPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		at         time.Duration
		wantReason string
		wantDetail string
	}{
		{2 * time.Minute, ReasonAdmissionCheck, "waiting for admission check prov (ProvisioningRequest big-prov-1: provisioning, ~3m left)"},
		{6 * time.Minute, "", ""},
	}
	for _, tc := range tests {
		if err := s.RunUntil(tc.at); err != nil {
			t.Fatal(err)
		}
		e, err := s.Explain("ns/big")
		if err != nil {
			t.Fatal(err)
		}
		if e.Reason != tc.wantReason {
			t.Errorf("at %s: reason %q, want %q", tc.at, e.Reason, tc.wantReason)
		}
		if tc.wantDetail != "" && (len(e.Details) != 1 || e.Details[0] != tc.wantDetail) {
			t.Errorf("at %s: details %q, want [%q]", tc.at, e.Details, tc.wantDetail)
		}
	}
}

// TestExplainCheckRetry: while a workload backs off after a failed request, explain
// says which check asked for the retry and why.
func TestExplainCheckRetry(t *testing.T) {
	retry := api.ProvisioningRetry{BackoffLimitCount: 2, BackoffBase: time.Minute, BackoffMax: 10 * time.Minute}
	objs := MakeWorld().Pool("gpu", 1, 8, api.CapacityOnDemand).Queue("cq", 32, "gpu").
		autoscale("gpu", "2", "5m").provCheck("cq", api.ProvisioningClassAtomicScaleUp, retry).
		Job("big", 3, 8, 0, time.Hour, 0).Obj()
	s, err := New(objs, Options{Policy: engine.DefaultPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RunUntil(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	e, err := s.Explain("ns/big")
	if err != nil {
		t.Fatal(err)
	}
	want := "admission check prov asked for a retry (ProvisioningRequest big-prov-1: no autoscaled NodePool can hold all the pods"
	found := false
	for _, d := range e.Details {
		found = found || strings.HasPrefix(d, want)
	}
	if !found {
		t.Errorf("details %q lack %q", e.Details, want)
	}
}

package admission

import (
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
)

// The queue rules the engine's Scheduler applies at submit, before any quota is looked
// at: each case resolves one workload and checks the reason code and ClusterQueue.
func TestResolveReasonCodes(t *testing.T) {
	tests := []struct {
		name string
		objs *api.Objects
		wl   *api.Workload
		// want is the reason code; wantCQ the ClusterQueue the workload leads to.
		want   ReasonCode
		wantCQ string
	}{
		{
			name: "missing LocalQueue",
			objs: gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).Obj(),
			wl:   gt.MakeWorkload("ns-a", "w").Queue("nope").Request(gpu, "1").Obj(),
			want: QueueMissing,
		},
		{
			name: "LocalQueue points at a missing ClusterQueue",
			objs: gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).LocalQueues(gt.MakeLocalQueue("ns", "lq", "ghost").Obj()).Obj(),
			wl:   gt.MakeWorkload("ns", "w").Request(gpu, "1").Obj(),
			want: ClusterQueueMissing,
		},
		{
			name: "namespace not selected",
			objs: gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").NamespaceSelector(map[string]string{"team": "ml"}).Obj()).
				Namespace("ns-a", map[string]string{"team": "web"}).Obj(),
			wl:   gt.MakeWorkload("ns-a", "w").Request(gpu, "1").Obj(),
			want: NamespaceNotSelected, wantCQ: "a",
		},
		{
			name: "namespace selected",
			objs: gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").NamespaceSelector(map[string]string{"team": "ml"}).Obj()).
				Namespace("ns-a", map[string]string{"team": "ml"}).Obj(),
			wl:   gt.MakeWorkload("ns-a", "w").Request(gpu, "1").Obj(),
			want: ReasonNone, wantCQ: "a",
		},
		{
			name: "a held queue still resolves: holding is Held's question",
			objs: gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Stop(api.StopHold).Obj()).Obj(),
			wl:   gt.MakeWorkload("ns-a", "w").Request(gpu, "1").Obj(),
			want: ReasonNone, wantCQ: "a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newAdmitter(t, tt.objs, Options{}).res.Resolve(tt.wl)
			if r.Code != tt.want || r.ClusterQueue != tt.wantCQ {
				t.Fatalf("resolution %s in %q (%s), want %s in %q", r.Code, r.ClusterQueue, r.Message, tt.want, tt.wantCQ)
			}
			if r.OK() != (tt.want == ReasonNone) {
				t.Fatalf("OK() = %v for code %s", r.OK(), r.Code)
			}
			if !r.OK() && r.Message == "" {
				t.Fatal("a refusal must say why")
			}
		})
	}
}

// Stop policies: Hold and HoldAndDrain on either queue hold new admissions; only
// HoldAndDrain drains what runs.
func TestResolverHeldAndDraining(t *testing.T) {
	tests := []struct {
		name     string
		cq, lq   api.StopPolicy
		held     bool
		draining bool
	}{
		{name: "open"},
		{name: "ClusterQueue Hold", cq: api.StopHold, held: true},
		{name: "LocalQueue Hold", lq: api.StopHold, held: true},
		{name: "ClusterQueue HoldAndDrain", cq: api.StopHoldAndDrain, held: true, draining: true},
		{name: "LocalQueue HoldAndDrain", lq: api.StopHoldAndDrain, held: true, draining: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Stop(tt.cq).Obj(), gpuCQ("b").Obj()).
				LocalQueues(gt.MakeLocalQueue("ns-a", "stopped", "a").Stop(tt.lq).Obj()).Obj()
			r := newAdmitter(t, objs, Options{}).res
			why, held := r.Held("a", "ns-a/stopped")
			if held != tt.held || held == (why == "") {
				t.Fatalf("Held = %v (%q), want %v with a reason when held", held, why, tt.held)
			}
			why, draining := r.Draining("a", "ns-a/stopped")
			if draining != tt.draining || draining == (why == "") {
				t.Fatalf("Draining = %v (%q), want %v with a reason when draining", draining, why, tt.draining)
			}
			if r.AnyDraining() != tt.draining {
				t.Fatalf("AnyDraining = %v, want %v", r.AnyDraining(), tt.draining)
			}
			if _, held := r.Held("b", "ns-b/lq"); held {
				t.Fatal("the other ClusterQueue is held too")
			}
		})
	}
}

func TestNewResolverErrors(t *testing.T) {
	bad := gpuCQ("a").NamespaceSelector(map[string]string{"bad key!": "x"}).Obj()
	tests := []struct {
		name string
		objs *api.Objects
		// want is a substring the error must contain (naming the object).
		want string
	}{
		{"LocalQueue defined twice", gt.MakeObjects().ClusterQueues(gpuCQ("a").Obj()).LocalQueues(gt.MakeLocalQueue("ns-a", "lq", "a").Obj()).Obj(),
			"localqueue ns-a/lq"},
		{"namespaceSelector that does not parse", gt.MakeObjects().ClusterQueues(bad).Obj(), `clusterqueue "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewResolver(tt.objs); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

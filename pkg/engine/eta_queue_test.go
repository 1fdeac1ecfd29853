package engine

import (
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// The quota ETA counts the workloads queued ahead: in a queue of 8 GPUs where r (4 GPUs)
// runs until 10m, "ahead" (8 GPUs, 30m) starts when r ends, so "me" (4 GPUs) starts when
// "ahead" ends, at 40m, in a StrictFIFO queue. In a BestEffortFIFO queue "me" fits in
// the 4 free GPUs at once, since "ahead" cannot use them. A workload ahead without a
// known run time holds its quota, so nothing after it gets an ETA.
func TestQueuedQuotaETA(t *testing.T) {
	now := gt.Epoch()
	cases := []struct {
		name      string
		strategy  api.QueueingStrategy
		aheadRun  time.Duration
		want      time.Duration
		wantAhead int
		none      bool
	}{
		{"strict: after the workload ahead", api.StrictFIFO, 30 * time.Minute, 40 * time.Minute, 1, false},
		{"best effort: the free GPUs at once", api.BestEffortFIFO, 30 * time.Minute, 0, 1, false},
		{"strict: ahead runs for ever", api.StrictFIFO, 0, 0, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h").Obj()).
				ClusterQueues(gt.MakeClusterQueue("cq").Strategy(tc.strategy).
					ResourceGroup(gt.MakeFlavorQuotas("h").Resource(resources.NvidiaGPU, "8").Obj()).Obj()).
				LocalQueues(gt.MakeLocalQueue("ns", "lq", "cq").Obj()).Obj()
			s, err := Build(objs, DefaultPolicy())
			if err != nil {
				t.Fatal(err)
			}
			q, err := admission.NewQuota(objs, admission.Options{})
			if err != nil {
				t.Fatal(err)
			}
			running := gt.MakeWorkload("ns", "r").PodSet("main", 1).GPUs(4).Obj()
			if a := q.Assign(running, "cq"); !a.Fits() || q.Admit(running, a) != nil {
				t.Fatal("r does not fit the empty queue")
			}
			ahead := gt.MakeWorkload("ns", "ahead").PodSet("main", 1).GPUs(8).Obj()
			me := gt.MakeWorkload("ns", "me").Created(time.Second).PodSet("main", 1).GPUs(4).Obj()
			if err := s.Submit(ahead, now, tc.aheadRun); err != nil {
				t.Fatal(err)
			}
			if err := s.Submit(me, now.Add(time.Second), time.Hour); err != nil {
				t.Fatal(err)
			}
			got, ok := s.QueuedQuotaETA(q, me.ID(), []Ending{{Workload: running.ID(), At: now.Add(10 * time.Minute)}}, now)
			if tc.none {
				if ok {
					t.Fatalf("ETA %+v, want none (the workload ahead never ends)", got)
				}
				return
			}
			if !ok || !got.At.Equal(now.Add(tc.want)) || got.Ahead != tc.wantAhead {
				t.Fatalf("ETA %+v ok %v, want %s with %d ahead", got, ok, tc.want, tc.wantAhead)
			}
		})
	}
}

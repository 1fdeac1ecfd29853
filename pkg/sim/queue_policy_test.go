package sim

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/plan"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// withCQ edits ClusterQueue cq of the world.
func (b *world) withCQ(cq string, edit func(*api.ClusterQueue)) *world {
	for i := range b.o.ClusterQueues {
		if b.o.ClusterQueues[i].Name == cq {
			edit(&b.o.ClusterQueues[i])
		}
	}
	return b
}

// withLQ edits LocalQueue ns/lq of the world.
func (b *world) withLQ(lq string, edit func(*api.LocalQueue)) *world {
	for i := range b.o.LocalQueues {
		if b.o.LocalQueues[i].Name == lq {
			edit(&b.o.LocalQueues[i])
		}
	}
	return b
}

// Queue policies are enforced by the scheduler both drivers run, before quota is asked:
// each case runs a one-job world and checks whether the job started and, if not, the
// reason of its last rejection.
func TestQueuePoliciesHoldWorkloads(t *testing.T) {
	base := func() *world {
		return MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "h").Job("j", 1, 1, 0, time.Hour, 0)
	}
	cases := []struct {
		name string
		w    *world
		// want: the job starts (wantReason "") or stays pending with this reason.
		wantReason string
	}{
		{name: "open queue admits", w: base()},
		{name: "ClusterQueue stopPolicy Hold", wantReason: string(plan.ReasonQueueHeld),
			w: base().withCQ("cq", func(cq *api.ClusterQueue) { cq.StopPolicy = api.StopHold })},
		{name: "LocalQueue stopPolicy Hold", wantReason: string(plan.ReasonQueueHeld),
			w: base().withLQ("lq", func(lq *api.LocalQueue) { lq.StopPolicy = api.StopHold })},
		{name: "namespaceSelector not matching", wantReason: string(plan.ReasonNamespaceNotSelected),
			w: base().withCQ("cq", func(cq *api.ClusterQueue) {
				cq.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "ml"}}
			})},
		{name: "namespaceSelector on the name label Kubernetes sets",
			w: base().withCQ("cq", func(cq *api.ClusterQueue) {
				cq.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "ns"}}
			})},
		{name: "missing LocalQueue", wantReason: string(plan.ReasonQueueMissing),
			w: base().withLQ("lq", func(lq *api.LocalQueue) { lq.Name = "other" })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			log, _ := runLog(t, c.w.Obj(), 1)
			_, placed := firstOf(log, "ns/j", EvPlaced)
			rej, rejected := firstOf(log, "ns/j", EvRejected)
			switch {
			case c.wantReason == "" && !placed:
				t.Fatalf("job not placed; rejected: %+v", rej)
			case c.wantReason != "" && placed:
				t.Fatalf("job placed, want held with %s", c.wantReason)
			case c.wantReason != "" && (!rejected || !hasPrefix(rej.Reason, c.wantReason)):
				t.Fatalf("rejection %q, want %s", rej.Reason, c.wantReason)
			}
		})
	}
}

// Nothing of a LocalQueue with stopPolicy HoldAndDrain is admitted, while another
// LocalQueue of the same ClusterQueue runs (the eviction side: the engine's
// TestSchedulerDrainsLocalQueue).
func TestLocalQueueHoldAndDrainHoldsOnlyItsWorkloads(t *testing.T) {
	objs := MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "h").
		Job("a", 1, 4, 0, time.Hour, 0).Job("b", 1, 4, 0, time.Hour, 0).
		inQueue("drained", "cq", "b").
		withLQ("drained", func(lq *api.LocalQueue) { lq.StopPolicy = api.StopHoldAndDrain }).Obj()
	log, _ := runLog(t, objs, 1)
	if _, ok := firstOf(log, "ns/a", EvFinished); !ok {
		t.Errorf("ns/a (open LocalQueue) did not finish")
	}
	if _, ok := firstOf(log, "ns/b", EvPlaced); ok {
		t.Errorf("ns/b was placed although its LocalQueue is held and draining")
	}
	if r, ok := firstOf(log, "ns/b", EvRejected); !ok || !hasPrefix(r.Reason, string(plan.ReasonQueueHeld)) {
		t.Errorf("ns/b rejection %+v, want QueueHeld", r)
	}
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

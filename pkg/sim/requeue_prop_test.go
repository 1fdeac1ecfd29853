package sim

import (
	"bytes"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"pgregory.net/rapid"
)

// Property: for any small world (two ClusterQueues, one of them possibly StrictFIFO and
// both possibly in one cohort, jobs of random sizes, priorities, arrivals and runtimes,
// a node failure and recovery, a quota change) and any engine policy, parking
// inadmissible workloads gives the same decisions as handing every pending workload to
// every cycle: the event logs are byte-identical once "rejected" (and "never-fits")
// records are left out. Those may differ: a parked workload is not re-explained while
// parked, so when another workload takes the capacity it waits for, its logged reason
// is not updated from "nodes" to "quota" until something wakes it. Runs go until no event is left: with
// preemption on they terminate (TestPreemptionTerminatesProperty).
func TestParkingKeepsDecisionsProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		parkingKeepsDecisions(t, rt, drawPreemptionWorld(rt))
	})
}

// Property: the same holds on the invariant property's richer worlds (several flavors
// with fallback, MIG, spot interruptions, node loss and additions, MIG re-layouts, quota
// changes, disruption budgets) under their drawn engine policy, in either head order,
// without an attempt cap: a cap counts visits, and a parked workload is not visited.
func TestParkingKeepsDecisionsRichWorldProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := drawInvariantWorld(rt)
		cfg := w.policy.Config
		cfg.MaxAttempts = 0
		cfg.HeadOrder = rapid.SampledFrom([]engine.HeadOrder{engine.HeadOrderPriority, engine.HeadOrderKueue}).Draw(rt, "headOrder")
		parkingKeepsDecisionsUnder(t, rt, w.objs, cfg)
	})
}

// parkingKeepsDecisions runs objs under a drawn engine policy with parking and with
// every pending workload in every cycle, and fails when the decisions differ. Kueue's
// cycle (its head order and in-cycle quota holds, engine/holds.go) is drawn too; the
// heads of the worlds' queues that cannot always reclaim (reclaimWithinCohort is not
// Any) hold quota there.
func parkingKeepsDecisions(t *testing.T, rt *rapid.T, objs *api.Objects) {
	cfg := engine.Config{Preemption: rapid.Bool().Draw(rt, "preempt"), Reservations: rapid.Bool().Draw(rt, "reserve"), Grace: time.Minute,
		HeadOrder: rapid.SampledFrom([]engine.HeadOrder{engine.HeadOrderPriority, engine.HeadOrderKueue}).Draw(rt, "headOrder")}
	parkingKeepsDecisionsUnder(t, rt, objs, cfg)
}

// parkingKeepsDecisionsUnder is parkingKeepsDecisions under engine policy cfg.
func parkingKeepsDecisionsUnder(t *testing.T, rt *rapid.T, objs *api.Objects, cfg engine.Config) {
	_, parked := simulateWith(t, objs, cfg, false)
	_, polled := simulateWith(t, objs, cfg, true)
	parked, polled = withoutRejections(parked), withoutRejections(polled)
	if !bytes.Equal(parked, polled) {
		rt.Fatalf("event logs differ:\nparked:\n%s\npolled:\n%s", parked, polled)
	}
}

// withoutRejections drops the "rejected" and "never-fits" lines of a JSON-lines event
// log: both are written when a visit finds them, and a parked workload is visited later.
func withoutRejections(log []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(log, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"event":"rejected"`)) && !bytes.Contains(line, []byte(`"event":"never-fits"`)) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

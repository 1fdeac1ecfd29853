package sim

import (
	"bytes"
	"fmt"
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
// every cycle: the event logs are byte-identical once "rejected" records are left out.
// Those may differ: a parked workload is not re-explained while parked, so when another
// workload takes the capacity it waits for, its logged reason is not updated from
// "nodes" to "quota" until something wakes it. Runs go until no event is left: with
// preemption on they terminate (TestPreemptionTerminatesProperty).
func TestParkingKeepsDecisionsProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := MakeWorld().Pool("h", rapid.IntRange(1, 3).Draw(rt, "nodes"), 8, api.CapacityOnDemand).
			Queue("cq-a", rapid.Int64Range(4, 16).Draw(rt, "quotaA"), "h")
		w.o.ClusterQueues = append(w.o.ClusterQueues, w.o.ClusterQueues[0])
		w.o.ClusterQueues[1].Name = "cq-b"
		w.o.LocalQueues = append(w.o.LocalQueues, api.LocalQueue{Meta: api.Meta{Name: "lq-b", Namespace: "ns"}, ClusterQueue: "cq-b"})
		if rapid.Bool().Draw(rt, "cohort") {
			w.o.ClusterQueues[0].Cohort, w.o.ClusterQueues[1].Cohort = "all", "all"
		}
		if rapid.Bool().Draw(rt, "strict") {
			w.strict("cq-b")
		}
		n := rapid.IntRange(2, 14).Draw(rt, "jobs")
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("j%02d", i)
			w.Job(name, 1, int64(rapid.IntRange(1, 8).Draw(rt, "gpus")),
				time.Duration(rapid.IntRange(0, 60).Draw(rt, "submitMin"))*time.Minute,
				time.Duration(rapid.IntRange(5, 90).Draw(rt, "runMin"))*time.Minute, 0).
				Priority(name, int32(rapid.IntRange(0, 2).Draw(rt, "prio")))
			if rapid.Bool().Draw(rt, "inB") {
				w.o.Workloads[i].Queue = "lq-b"
			}
		}
		w.Event(api.ClusterEvent{Meta: api.Meta{Name: "fail"}, Type: api.EventNodeFail, At: 20 * time.Minute, Nodes: []string{"h-0"}}).
			Event(api.ClusterEvent{Meta: api.Meta{Name: "back"}, Type: api.EventNodeRecover, At: 50 * time.Minute, Nodes: []string{"h-0"}}).
			Event(api.ClusterEvent{Meta: api.Meta{Name: "quota"}, Type: api.EventQuotaChange, At: 40 * time.Minute, ClusterQueue: "cq-a",
				ResourceGroups: gpuQuota("h", rapid.Int64Range(2, 16).Draw(rt, "newQuotaA"))})
		cfg := engine.Config{Preemption: rapid.Bool().Draw(rt, "preempt"), Reservations: rapid.Bool().Draw(rt, "reserve"), Grace: time.Minute}
		objs := w.Obj()
		_, parked := simulateWith(t, objs, cfg, false)
		_, polled := simulateWith(t, objs, cfg, true)
		parked, polled = withoutRejections(parked), withoutRejections(polled)
		if !bytes.Equal(parked, polled) {
			rt.Fatalf("event logs differ:\nparked:\n%s\npolled:\n%s", parked, polled)
		}
	})
}

// withoutRejections drops the "rejected" lines of a JSON-lines event log.
func withoutRejections(log []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(log, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"event":"rejected"`)) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

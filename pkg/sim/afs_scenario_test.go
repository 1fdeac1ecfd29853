package sim

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Admission fair sharing across LocalQueues (Kueue's AdmissionFairSharing), in the
// scheduler both drivers run: LocalQueue a used the whole node for the first hour; at
// 1h a job of a and a job of b arrive together for the one node. With fair sharing on
// b, the less used LocalQueue, goes first; without it the tie goes to a (by name).
func TestAdmissionFairSharingOrdersLocalQueues(t *testing.T) {
	world := func(afs bool) *api.Objects {
		return MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "h").
			Job("warm", 1, 8, 0, time.Hour, 0).Job("a-next", 1, 8, time.Hour, time.Hour, 0).Job("b-next", 1, 8, time.Hour, time.Hour, 0).
			inQueue("a", "cq", "warm", "a-next").inQueue("b", "cq", "b-next").
			withCQ("cq", func(cq *api.ClusterQueue) {
				cq.AdmissionFairSharing = api.AdmissionFairSharing{Enabled: afs, HalfLife: time.Hour}
			}).Obj()
	}
	for _, c := range []struct {
		afs   bool
		first string // want: the job placed at 1h; the other waits until 2h
	}{{afs: true, first: "ns/b-next"}, {afs: false, first: "ns/a-next"}} {
		log, _ := runLog(t, world(c.afs), 1)
		second := "ns/a-next"
		if c.first == second {
			second = "ns/b-next"
		}
		p1, ok1 := firstOf(log, c.first, EvPlaced)
		p2, ok2 := firstOf(log, second, EvPlaced)
		if !ok1 || !ok2 || p1.T != Seconds(time.Hour) || p2.T != Seconds(2*time.Hour) {
			t.Errorf("fair sharing %v: %s placed at %v (%v), %s at %v (%v); want %s at 1h, %s at 2h",
				c.afs, c.first, p1.T, ok1, second, p2.T, ok2, c.first, second)
		}
	}
}

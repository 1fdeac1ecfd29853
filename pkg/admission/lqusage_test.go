package admission

import (
	"fmt"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// teamQueues is ClusterQueue a with admission fair sharing (half-life halfLife) and
// LocalQueues team/<name> for each name.
func teamQueues(t *testing.T, halfLife time.Duration, names ...string) *Resolver {
	t.Helper()
	ob := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").AdmissionFairSharing(halfLife).Obj())
	for _, n := range names {
		ob.LocalQueues(gt.MakeLocalQueue("team", n, "a").Obj())
	}
	return newAdmitter(t, ob.Obj(), Options{}).res
}

// holding reports the given LocalQueues' admitted milli-GPU to Tick.
func holding(held map[string]resources.MilliGPU) func(add func(string, resources.MilliGPU)) {
	return func(add func(string, resources.MilliGPU)) {
		for lq, m := range held {
			add(lq, m)
		}
	}
}

// The entry penalty charges a LocalQueue at admission; a tick decays usage by the
// ClusterQueue's half-life and adds what the LocalQueue's workloads hold, so the other
// LocalQueue sorts first (the engine orders workloads of equal priority by Weighted).
func TestLocalQueueUsagePenaltyDecayAndGrowth(t *testing.T) {
	u := NewLocalQueueUsage(teamQueues(t, time.Hour, "heavy", "light"), time.Hour)
	if !u.Enabled("a") {
		t.Fatal("ClusterQueue a enables admission fair sharing")
	}
	u.Tick(gt.Epoch(), holding(nil))
	u.Admitted("a", "team/heavy", 4000)
	// The entry penalty charges one hour of 4 GPUs at once.
	const hour4 = 4000 * 3600
	if got := u.Usage("team/heavy"); got != hour4 {
		t.Fatalf("heavy usage %d after admission, want the penalty %d", got, hour4)
	}
	u.Tick(gt.Epoch().Add(time.Hour), holding(map[string]resources.MilliGPU{"team/heavy": 4000}))
	// The penalty halved by one half-life, plus one hour of 4 GPUs.
	if got := u.Usage("team/heavy"); got != hour4/2+hour4 {
		t.Fatalf("heavy usage %d, want %d", got, hour4/2+hour4)
	}
	if h, l := u.Weighted("team/heavy"), u.Weighted("team/light"); l >= h {
		t.Fatalf("weighted usage light %d, heavy %d: want light first", l, h)
	}
}

// Without ticks in between, the entry penalty alone makes admissions alternate between
// two LocalQueues, each picked by the least weighted usage (ties by name).
func TestAdmissionPenaltyAlternatesLocalQueues(t *testing.T) {
	u := NewLocalQueueUsage(teamQueues(t, time.Hour, "x", "y"), 0)
	var got []string
	for i := 0; i < 4; i++ {
		next := "team/x"
		if u.Weighted("team/y") < u.Weighted(next) {
			next = "team/y"
		}
		got = append(got, next)
		u.Admitted("a", next, 1000)
	}
	if want := []string{"team/x", "team/y", "team/x", "team/y"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("admission order %v, want %v", got, want)
	}
}

// Usage is kept in milli-GPU-milliseconds, so ticks far shorter than a second lose
// nothing to rounding.
func TestFrequentTicksLoseNoUsage(t *testing.T) {
	u := NewLocalQueueUsage(teamQueues(t, 0, "lq"), time.Second)
	u.Tick(gt.Epoch(), holding(nil))
	u.Admitted("a", "team/lq", 1000)
	for i := 1; i <= 10; i++ {
		u.Tick(gt.Epoch().Add(time.Duration(i)*100*time.Millisecond), holding(map[string]resources.MilliGPU{"team/lq": 1000}))
	}
	// One second of penalty plus ten ticks of 100ms, one GPU each: 2000 milli-GPU-seconds.
	if got := u.Usage("team/lq"); got != 2000 {
		t.Fatalf("usage %d, want 2000", got)
	}
}

// A ClusterQueue without admission fair sharing charges no penalty.
func TestNoPenaltyWithoutAdmissionFairSharing(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).Obj()
	u := NewLocalQueueUsage(newAdmitter(t, objs, Options{}).res, time.Hour)
	u.Admitted("a", "ns-a/lq", 1000)
	if u.Enabled("a") || u.Usage("ns-a/lq") != 0 {
		t.Fatalf("enabled %v, usage %d; want neither", u.Enabled("a"), u.Usage("ns-a/lq"))
	}
}

package placement

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// Scenario: the ETA is the end time of the workload whose finish frees enough GPUs. A
// gang of two 8-GPU pods waits for two whole nodes: n01 frees at +10m, n02 at +20m, n00
// at +30m, n03 never (no runtime bound): the ETA is +20m, on n01 and n02.
func TestPlanReservationETAIsTheEndThatFreesEnough(t *testing.T) {
	snap, running := peBind(t, peNodes(t, 4, 8), []peGang{
		{run: MakeRunning("ns/a").Ends(peNow.Add(30 * time.Minute)).Obj(), perPod: 8, nodes: []string{"n00"}},
		{run: MakeRunning("ns/b").Ends(peNow.Add(10 * time.Minute)).Obj(), perPod: 8, nodes: []string{"n01"}},
		{run: MakeRunning("ns/c").Ends(peNow.Add(20 * time.Minute)).Obj(), perPod: 8, nodes: []string{"n02"}},
		{run: MakeRunning("ns/d").Obj(), perPod: 8, nodes: []string{"n03"}},
	})
	ov := snap.Overlay()
	res, err := PlanReservation(ov, peFirstFit("ns/head", 2, 8),
		ReservationRequest{Workload: "ns/head", Queue: "cq", Running: byEnd(t, running), Now: peNow})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Reserved {
		t.Fatalf("outcome %s (%s), want Reserved", res.Outcome, res.Reason)
	}
	r := res.Reservation
	if !r.Start.Equal(peNow.Add(20 * time.Minute)) {
		t.Errorf("ETA = %s, want %s", r.Start, peNow.Add(20*time.Minute))
	}
	if fmt.Sprint(r.Nodes()) != "[n01 n02]" || fmt.Sprint(r.Waits) != "[ns/b ns/c]" {
		t.Errorf("nodes %v waits %v, want [n01 n02] and [ns/b ns/c]", r.Nodes(), r.Waits)
	}
	if len(r.GPUs("n01")) != 8 || len(r.GPUs("n00")) != 0 {
		t.Errorf("GPUs on n01 = %v, on n00 = %v", r.GPUs("n01"), r.GPUs("n00"))
	}
	if fmt.Sprint(res.Unbounded) != "[ns/d]" || !strings.Contains(res.Reason, "when ns/c ends") {
		t.Errorf("unbounded %v, reason %q", res.Unbounded, res.Reason)
	}
	if len(ov.Changes()) != 0 {
		t.Errorf("overlay changed")
	}
}

func TestPlanReservationOutcomes(t *testing.T) {
	cases := []struct {
		name  string
		gangs []peGang
		pods  int // the head's 8-GPU pods
		// want: outcome and, when reserved, the ETA offset from peNow (the test clock).
		wantOutcome ReserveOutcome
		wantETA     time.Duration
	}{
		{"fits now", []peGang{{run: MakeRunning("ns/a").Obj(), perPod: 8, nodes: []string{"n00"}}}, 1, ReserveFitsNow, 0},
		{"only unbounded work: no ETA", []peGang{
			{run: MakeRunning("ns/a").Obj(), perPod: 8, nodes: []string{"n00"}},
			{run: MakeRunning("ns/b").Obj(), perPod: 8, nodes: []string{"n01"}},
		}, 1, ReserveNoETA, 0},
		{"larger than the cluster: no ETA", []peGang{
			{run: MakeRunning("ns/a").Ends(peNow.Add(time.Minute)).Obj(), perPod: 8, nodes: []string{"n00"}},
		}, 3, ReserveNoETA, 0},
		{"overdue workload counts as ending now", []peGang{
			{run: MakeRunning("ns/a").Ends(peNow.Add(-time.Minute)).Obj(), perPod: 8, nodes: []string{"n00"}},
			{run: MakeRunning("ns/b").Obj(), perPod: 8, nodes: []string{"n01"}},
		}, 1, Reserved, 0},
		{"equal end times free together", []peGang{
			{run: MakeRunning("ns/a").Ends(peNow.Add(time.Hour)).Obj(), perPod: 4, nodes: []string{"n00"}},
			{run: MakeRunning("ns/b").Ends(peNow.Add(time.Hour)).Obj(), perPod: 4, nodes: []string{"n00"}},
			{run: MakeRunning("ns/c").Obj(), perPod: 8, nodes: []string{"n01"}},
		}, 1, Reserved, time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap, running := peBind(t, peNodes(t, 2, 8), tc.gangs)
			res, err := PlanReservation(snap.Overlay(), peFirstFit("ns/head", tc.pods, 8),
				ReservationRequest{Workload: "ns/head", Running: byEnd(t, running), Now: peNow})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tc.wantOutcome {
				t.Fatalf("outcome %s (%s), want %s", res.Outcome, res.Reason, tc.wantOutcome)
			}
			if tc.wantOutcome == Reserved && !res.Reservation.Start.Equal(peNow.Add(tc.wantETA)) {
				t.Errorf("ETA %s, want peNow+%s", res.Reservation.Start, tc.wantETA)
			}
			if tc.wantOutcome == ReserveNoETA && !strings.Contains(res.Reason, "does not fit even after") {
				t.Errorf("reason %q does not explain", res.Reason)
			}
		})
	}
}

// A second head cannot count on capacity an earlier reservation holds: with one node
// freeing at +10m and held by the first head from then on, the second waits for +20m.
func TestPlanReservationRespectsHeldReservations(t *testing.T) {
	snap, running := peBind(t, peNodes(t, 2, 8), []peGang{
		{run: MakeRunning("ns/a").Ends(peNow.Add(10 * time.Minute)).Obj(), perPod: 8, nodes: []string{"n00"}},
		{run: MakeRunning("ns/b").Ends(peNow.Add(20 * time.Minute)).Obj(), perPod: 8, nodes: []string{"n01"}},
	})
	ov := snap.Overlay()
	first, err := PlanReservation(ov, peFirstFit("ns/first", 1, 8), ReservationRequest{Workload: "ns/first", Running: byEnd(t, running), Now: peNow})
	if err != nil || first.Outcome != Reserved {
		t.Fatalf("first: %v %+v", err, first)
	}
	second, err := PlanReservation(ov, peFirstFit("ns/second", 1, 8), ReservationRequest{
		Workload: "ns/second", Running: byEnd(t, running), Now: peNow, Held: ReservationSet{*first.Reservation}})
	if err != nil || second.Outcome != Reserved {
		t.Fatalf("second: %v %+v", err, second)
	}
	if !first.Reservation.Start.Equal(peNow.Add(10*time.Minute)) || !second.Reservation.Start.Equal(peNow.Add(20*time.Minute)) {
		t.Errorf("ETAs %s and %s, want +10m and +20m", first.Reservation.Start, second.Reservation.Start)
	}
	if fmt.Sprint(second.Reservation.Nodes()) != "[n01]" {
		t.Errorf("second reserved %v, want [n01]", second.Reservation.Nodes())
	}
}

// Last cycle's reservation is kept when it is still valid and earlier than what a new
// walk finds, so an ETA never slips; an invalid one is replaced.
func TestPlanReservationKeepsValidPrevious(t *testing.T) {
	snap, running := peBind(t, peNodes(t, 2, 8), []peGang{
		{run: MakeRunning("ns/a").Ends(peNow.Add(30 * time.Minute)).Obj(), perPod: 8, nodes: []string{"n00"}},
		{run: MakeRunning("ns/b").Ends(peNow.Add(10 * time.Minute)).Obj(), perPod: 8, nodes: []string{"n01"}},
	})
	ov := snap.Overlay()
	fresh, err := PlanReservation(ov, peFirstFit("ns/head", 1, 8), ReservationRequest{Workload: "ns/head", Running: byEnd(t, running), Now: peNow})
	if err != nil || fresh.Reservation == nil {
		t.Fatalf("%v %+v", err, fresh)
	}
	// Pretend last cycle reserved n01 from +5m: ns/b still holds it then, so it is not
	// valid and the fresh ETA wins.
	stale := *fresh.Reservation
	stale.Start = peNow.Add(5 * time.Minute)
	got, _ := PlanReservation(ov, peFirstFit("ns/head", 1, 8), ReservationRequest{Workload: "ns/head", Running: byEnd(t, running), Now: peNow, Previous: &stale})
	if got.KeptPrevious || !got.Reservation.Start.Equal(peNow.Add(10*time.Minute)) {
		t.Errorf("invalid previous kept: %+v", got)
	}
	// A previous reservation on n01 from +10m stays valid when a new walk (a fit that
	// only takes n00) would say +30m.
	onlyN00 := func(ov *cluster.Overlay) (*Placement, bool) {
		ref := cluster.PodRef{Workload: "ns/head", PodSet: "main", Index: 0}
		return &Placement{Workload: "ns/head"}, peAssume(ov, ref, peGPUReq(8), "n00") == nil
	}
	got, _ = PlanReservation(ov, onlyN00, ReservationRequest{Workload: "ns/head", Running: byEnd(t, running), Now: peNow, Previous: fresh.Reservation})
	if !got.KeptPrevious || !got.Reservation.Start.Equal(peNow.Add(10*time.Minute)) {
		t.Errorf("valid earlier previous not kept: %+v", got)
	}
}

func TestReservationSetAllows(t *testing.T) {
	start := peNow.Add(time.Hour)
	reservedPod := cluster.BoundPod{Ref: cluster.PodRef{Workload: "ns/big", PodSet: "main"}, Node: "n00",
		Devices: peWhole(0, 1, 2, 3)}
	reservedMIG := cluster.BoundPod{Ref: cluster.PodRef{Workload: "ns/big", PodSet: "mig"}, Node: "n01",
		Devices: peMIG(3, "3g.40gb", 0)}
	set := ReservationSet{{Workload: "ns/big", Start: start, Pods: []cluster.BoundPod{reservedPod, reservedMIG}}}
	podWith := func(node string, a devices.Assignment) []cluster.BoundPod {
		return []cluster.BoundPod{{Ref: cluster.PodRef{Workload: "ns/small", PodSet: "main"}, Node: node, Devices: a}}
	}
	pod := func(node string, gpus ...int) []cluster.BoundPod { return podWith(node, peWhole(gpus...)) }
	cases := []struct {
		name     string
		workload api.WorkloadID
		pods     []cluster.BoundPod
		end      time.Time
		// want: allowed, and a substring of the reason when refused.
		want       bool
		wantReason string
	}{
		{"ends before the reservation starts", "ns/small", pod("n00", 0), start.Add(-time.Minute), true, ""},
		{"ends exactly at the start", "ns/small", pod("n00", 0), start, true, ""},
		{"ends after, on a reserved GPU", "ns/small", pod("n00", 2), start.Add(time.Minute), false, "GPU-2 on node n00, reserved for ns/big"},
		{"no runtime bound, on a reserved GPU", "ns/small", pod("n00", 3), time.Time{}, false, "no runtime bound"},
		{"no runtime bound, on a GPU the reservation does not need", "ns/small", pod("n00", 5), time.Time{}, true, ""},
		{"another node", "ns/small", pod("n02", 0), time.Time{}, true, ""},
		{"another slice of a reserved MIG GPU", "ns/small", podWith("n01", peMIG(3, "1g.10gb", 6)), time.Time{}, false, "GPU-3 on node n01"},
		{"a MIG slice of another GPU", "ns/small", podWith("n01", peMIG(4, "1g.10gb", 6)), time.Time{}, true, ""},
		{"the reserved workload itself", "ns/big", pod("n00", 0), time.Time{}, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := set.Allows(tc.workload, tc.pods, tc.end)
			if ok != tc.want || !strings.Contains(why, tc.wantReason) {
				t.Fatalf("Allows = %v %q, want %v with %q", ok, why, tc.want, tc.wantReason)
			}
		})
	}
}

// peWhole is whole GPUs by index (device IDs "GPU-<i>").
func peWhole(gpus ...int) devices.Assignment {
	var out devices.Assignment
	for _, g := range gpus {
		out.Devices = append(out.Devices, devices.Device{GPU: g, Kind: devices.WholeGPU, Milli: 1000})
	}
	return out
}

// peMIG is one MIG instance of profile at start on GPU g.
func peMIG(g int, profile string, start int) devices.Assignment {
	return devices.Assignment{Devices: []devices.Device{{GPU: g, Kind: devices.MIGDevice, Instance: devices.Instance{Profile: profile, Start: start}}}}
}

// Property: the ETA is exact. At the reservation's start (every bounded workload ending
// by then freed) the gang fits; just before it (only those ending strictly earlier
// freed) it does not; with no ETA, freeing every bounded workload does not help; and
// the overlay is never changed.
func TestPlanReservationProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nodes := rapid.IntRange(1, 4).Draw(rt, "nodes")
		used := make([]int, nodes)
		var gangs []peGang
		for g := 0; g < rapid.IntRange(0, 10).Draw(rt, "gangs"); g++ {
			per := rapid.IntRange(1, 4).Draw(rt, "per")
			n := rapid.IntRange(0, nodes-1).Draw(rt, "node")
			if used[n]+per > 8 {
				continue
			}
			used[n] += per
			r := MakeRunning(fmt.Sprintf("ns/g%d", g))
			if end := rapid.IntRange(-1, 6).Draw(rt, "end"); end >= 0 {
				r.Ends(peNow.Add(time.Duration(end) * 10 * time.Minute))
			}
			gangs = append(gangs, peGang{run: r.Obj(), perPod: per, nodes: []string{fmt.Sprintf("n%02d", n)}})
		}
		snap, running := peBind(t, peNodes(t, nodes, 8), gangs)
		ov := snap.Overlay()
		pods, per := rapid.IntRange(1, 3).Draw(rt, "pods"), rapid.IntRange(1, 8).Draw(rt, "per")
		fit := peFirstFit("ns/head", pods, per)
		res, err := PlanReservation(ov, fit, ReservationRequest{Workload: "ns/head", Running: byEnd(t, running), Now: peNow})
		if err != nil {
			rt.Fatal(err)
		}
		// The GPU bounds only skip end times that cannot be enough: same answer.
		free := nodes * 8
		for _, u := range used {
			free -= u
		}
		bounded, err := PlanReservation(ov, fit, ReservationRequest{Workload: "ns/head", Running: byEnd(t, running), Now: peNow,
			NeedGPUMilli: resources.MilliGPU(pods*per) * resources.MilliPerGPU, FreeGPUMilli: resources.MilliGPU(free) * resources.MilliPerGPU})
		if err != nil {
			rt.Fatal(err)
		}
		if bounded.Outcome != res.Outcome || (res.Reservation != nil && !bounded.Reservation.Start.Equal(res.Reservation.Start)) {
			rt.Fatalf("with GPU bounds: %s %v; without: %s %v", bounded.Outcome, bounded.Reservation, res.Outcome, res.Reservation)
		}
		if len(ov.Changes()) != 0 {
			rt.Fatalf("overlay changed")
		}
		fitsFreeing := func(keep func(end time.Time) bool) bool {
			defer ov.Undo(0)
			for _, r := range running {
				if r.ExpectedEnd.IsZero() || !keep(r.ExpectedEnd) {
					continue
				}
				for _, p := range r.Pods {
					if err := ov.Forget(p); err != nil {
						rt.Fatal(err)
					}
				}
			}
			_, ok := fit(ov)
			return ok
		}
		_, now := fit(ov)
		ov.Undo(0)
		switch res.Outcome {
		case ReserveFitsNow:
			if !now {
				rt.Fatalf("FitsNow but it does not fit")
			}
		case Reserved:
			start := res.Reservation.Start
			if now || !fitsFreeing(func(e time.Time) bool { return !e.After(start) }) {
				rt.Fatalf("reserved at %s but the gang does not fit then (or fits now)", start)
			}
			if start.After(peNow) && fitsFreeing(func(e time.Time) bool { return e.Before(start) }) {
				rt.Fatalf("ETA %s is not the earliest", start)
			}
			if len(res.Reservation.Pods) == 0 {
				rt.Fatalf("reservation without pods")
			}
		case ReserveNoETA:
			if fitsFreeing(func(time.Time) bool { return true }) {
				rt.Fatalf("no ETA, yet freeing every bounded workload fits")
			}
		}
	})
}

func TestPlanReservationBadInput(t *testing.T) {
	snap, running := peBind(t, peNodes(t, 1, 8), []peGang{{run: MakeRunning("ns/a").Obj(), perPod: 8, nodes: []string{"n00"}}})
	ends := byEnd(t, running)
	cases := []struct {
		name string
		ov   *cluster.Overlay
		fit  GangFit
		run  *RunningByEnd
		// want: a substring of the error.
		want string
	}{
		{"nil overlay", nil, peFirstFit("ns/h", 1, 8), ends, "overlay and fit must not be nil"},
		{"nil fit", snap.Overlay(), nil, ends, "overlay and fit must not be nil"},
		{"nil running", snap.Overlay(), peFirstFit("ns/h", 1, 8), nil, "running: must not be nil"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PlanReservation(tc.ov, tc.fit, ReservationRequest{Workload: "ns/h", Running: tc.run, Now: peNow})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "ns/h") {
				t.Fatalf("error = %v, want it to name ns/h and say %q", err, tc.want)
			}
		})
	}
}

// TestRunningByEndBadInput: an invalid running list is refused naming the workload and
// the field, when built and when a workload is added, and the list is left as it was.
func TestRunningByEndBadInput(t *testing.T) {
	a := MakeRunning("ns/a").Obj()
	for _, tc := range []struct {
		name string
		run  []Running
		want string
	}{
		{"duplicate", []Running{a, a}, "ns/a: id: listed twice"},
		{"empty id", []Running{{}}, "#0: id: must not be empty"},
		{"negative min runtime", []Running{MakeRunning("ns/x").MinRuntime(-time.Second).Obj()}, "ns/x: minRuntime"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewRunningByEnd(tc.run); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
	r := byEnd(t, []Running{a})
	if err := r.Add(a); err == nil || !strings.Contains(err.Error(), "ns/a: id: listed twice") {
		t.Fatalf("Add of a duplicate: error = %v", err)
	}
	if r.Len() != 1 {
		t.Fatalf("a refused Add changed the list: %d workloads", r.Len())
	}
}

// byEnd is NewRunningByEnd that must succeed.
func byEnd(t interface {
	Helper()
	Fatalf(string, ...any)
}, rs []Running) *RunningByEnd {
	t.Helper()
	r, err := NewRunningByEnd(rs)
	if err != nil {
		t.Fatalf("running list: %v", err)
	}
	return r
}

// TestRunningByEndOrder: NewRunningByEnd puts any running list in compareEnds order
// (expected end, an unknown end first, ties by ID), including ends far apart, equal
// and before 1970.
func TestRunningByEndOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 40).Draw(t, "n")
		ends := []time.Time{{}, time.Unix(-5, 999), time.Unix(0, 0), time.Unix(0, 1), time.Unix(1, 0),
			time.Date(2300, 1, 1, 0, 0, 0, 7, time.UTC), time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)}
		var rs []Running
		for i := 0; i < n; i++ {
			rs = append(rs, Running{ID: api.WorkloadID(fmt.Sprintf("w%03d", rapid.IntRange(0, 999).Draw(t, "id")*1000+i)),
				ExpectedEnd: rapid.SampledFrom(ends).Draw(t, "end")})
		}
		got := byEnd(t, rs).List()
		want := slices.SortedFunc(slices.Values(rs), compareEnds)
		if !slices.EqualFunc(got, want, func(a *Running, b Running) bool { return a.ID == b.ID }) {
			t.Fatalf("order %v, want %v", ids(got), valueIDs(want))
		}
		// Reset over a list used before (longer, with other IDs) gives the same.
		reused := byEnd(t, append(slices.Clone(rs), Running{ID: "zz-old-1"}, Running{ID: "zz-old-2"}))
		if err := reused.Reset(rs); err != nil {
			t.Fatal(err)
		}
		if got := reused.List(); !slices.EqualFunc(got, want, func(a *Running, b Running) bool { return a.ID == b.ID }) {
			t.Fatalf("after Reset: order %v, want %v", ids(got), valueIDs(want))
		}
	})
}

func ids(rs []*Running) []api.WorkloadID {
	out := make([]api.WorkloadID, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func valueIDs(rs []Running) []api.WorkloadID {
	out := make([]api.WorkloadID, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// TestRunningByEndResetSequence: one RunningByEnd reset over a sequence of running
// lists that change a little or a lot between steps (starts appended, finishes
// swapped out, ends moved, gangs added by Add, bad entries) always gives what a fresh
// NewRunningByEnd gives: the same order, or the same error.
func TestRunningByEndResetSequence(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var r RunningByEnd
		var rs []Running
		fresh := freshRunning(t)
		for step := rapid.IntRange(1, 12).Draw(t, "steps"); step > 0; step-- {
			for n := rapid.IntRange(0, 6).Draw(t, "changes"); n > 0; n-- {
				switch op := rapid.IntRange(0, 5).Draw(t, "op"); {
				case op <= 1 || len(rs) == 0:
					rs = append(rs, fresh())
				case op == 2:
					i := rapid.IntRange(0, len(rs)-1).Draw(t, "finish")
					rs[i] = rs[len(rs)-1]
					rs = rs[:len(rs)-1]
				case op == 3:
					rs[rapid.IntRange(0, len(rs)-1).Draw(t, "moved")].ExpectedEnd = time.Unix(int64(rapid.IntRange(0, 20).Draw(t, "newEnd")), 0)
				case op == 4:
					rs = append(rs, rs[rapid.IntRange(0, len(rs)-1).Draw(t, "dup")]) // a duplicate ID
				default:
					rs[rapid.IntRange(0, len(rs)-1).Draw(t, "bad")].GPUMilli = -1
				}
			}
			if rapid.IntRange(0, 3).Draw(t, "fixAll") == 0 { // sometimes a clean list again
				rs = clean(rs)
			}
			want, wantErr := NewRunningByEnd(slices.Clone(rs))
			err := r.Reset(slices.Clone(rs))
			switch {
			case (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()):
				t.Fatalf("Reset error %v, fresh %v", err, wantErr)
			case err == nil && !slices.EqualFunc(r.List(), want.List(), func(a, b *Running) bool { return a.ID == b.ID && a.ExpectedEnd.Equal(b.ExpectedEnd) }):
				t.Fatalf("Reset order %v, fresh %v", ids(r.List()), ids(want.List()))
			}
			if err == nil && rapid.Bool().Draw(t, "add") {
				if err := r.Add(fresh()); err != nil {
					t.Fatal(err)
				}
			}
			if err != nil { // the caller would not keep a list it cannot use
				rs = clean(rs)
			}
		}
	})
}

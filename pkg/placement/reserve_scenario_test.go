package placement

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
)

// peWorkload is a workload of pods identical pods of gpus whole GPUs each.
func peWorkload(name string, pods int32, gpus int) *api.Workload {
	return gt.MakeWorkload("ns", name).Pods(pods).Requests(peGPUReq(gpus)).Obj()
}

// streamResult is what one run of the backfill loop observed.
type streamResult struct {
	gangStart  time.Time // zero: never started
	firstETA   time.Time // the gang's first reservation start (zero: none)
	etaSlipped bool      // some later cycle's ETA was after the first one
	backfilled int       // small jobs started while the gang waited
}

// runStream simulates a simple scheduler loop, one cycle a minute for horizon: four
// 8-GPU nodes full of 1-GPU jobs ending 1..32 minutes from now; a 32-GPU gang (4 × 8)
// at the head of the queue; two new 1-GPU jobs of 20 minutes arriving every minute,
// backfilled first-come first-served. With honour set, the gang gets a reservation
// each cycle and small jobs are kept only when the reservations allow them.
func runStream(t *testing.T, honour bool, horizon time.Duration) streamResult {
	t.Helper()
	var initial []peGang
	for i := 0; i < 32; i++ {
		r := MakeRunning(fmt.Sprintf("ns/init-%02d", i)).Ends(peNow.Add(time.Duration(i+1) * time.Minute)).Obj()
		initial = append(initial, peGang{run: r, perPod: 1, nodes: []string{fmt.Sprintf("n%02d", i/8)}})
	}
	snap, running := peBind(t, peNodes(t, 4, 8), initial)
	rnd := rand.New(rand.NewSource(7))
	big := peWorkload("big", 4, 8)
	bigFit := WorkloadFit(big, nil, Options{Rand: rnd})
	var out streamResult
	var held ReservationSet
	var prev *Reservation
	var pending []*api.Workload
	const jobLen = 20 * time.Minute
	for now, n := peNow, 0; now.Before(peNow.Add(horizon)); now, n = now.Add(time.Minute), n+1 {
		ov := snap.Overlay()
		running = finish(t, ov, running, now)
		if out.gangStart.IsZero() {
			if _, ok := bigFit(ov); ok {
				out.gangStart = now
				held = nil
			} else if honour {
				res, err := PlanReservation(ov, bigFit, ReservationRequest{Workload: big.ID(), Running: byEnd(t, running), Now: now, Previous: prev})
				if err != nil || res.Outcome != Reserved {
					t.Fatalf("minute %d: reservation %v %+v", n, err, res)
				}
				prev, held = res.Reservation, ReservationSet{*res.Reservation}
				if out.firstETA.IsZero() {
					out.firstETA = prev.Start
				}
				out.etaSlipped = out.etaSlipped || prev.Start.After(out.firstETA)
			}
		}
		pending = append(pending, peWorkload(fmt.Sprintf("small-%03d-a", n), 1, 1), peWorkload(fmt.Sprintf("small-%03d-b", n), 1, 1))
		var still []*api.Workload
		for _, w := range pending {
			m := ov.Mark()
			pl, d := PlaceWorkload(ov, w, nil, Options{Rand: rnd})
			if d != nil {
				still = append(still, w)
				continue
			}
			if ok, _ := held.Allows(w.ID(), AssumedSince(ov, m), now.Add(jobLen)); !ok {
				ov.Undo(m)
				still = append(still, w)
				continue
			}
			running = append(running, runningOf(w, pl, now.Add(jobLen)))
			if out.gangStart.IsZero() {
				out.backfilled++
			}
		}
		pending = still
		snap = ov.Snapshot()
	}
	return out
}

// finish removes the pods of workloads that ended by now.
func finish(t *testing.T, ov *cluster.Overlay, running []Running, now time.Time) []Running {
	t.Helper()
	var left []Running
	for _, r := range running {
		if r.ExpectedEnd.After(now) {
			left = append(left, r)
			continue
		}
		for _, p := range r.Pods {
			if err := ov.Forget(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	return left
}

func runningOf(w *api.Workload, pl Placement, end time.Time) Running {
	r := MakeRunning(string(w.ID())).Ends(end).Obj()
	for _, p := range pl.Pods {
		r.Pods = append(r.Pods, cluster.PodRef{Workload: w.ID(), PodSet: p.PodSet, Index: p.Index})
	}
	return r
}

// Scenario: a steady stream of 1-GPU short jobs cannot delay a 32-GPU gang past its
// reservation. Without reservations the same stream starves the gang for the whole
// horizon, which shows the check is what protects it.
func TestBackfillStreamCannotDelayReservedGang(t *testing.T) {
	with := runStream(t, true, 2*time.Hour)
	if with.firstETA.IsZero() || with.gangStart.IsZero() {
		t.Fatalf("gang never reserved or started: %+v", with)
	}
	if want := peNow.Add(32 * time.Minute); !with.firstETA.Equal(want) {
		t.Errorf("first ETA %s, want %s (the end of the last initial job)", with.firstETA, want)
	}
	if with.gangStart.After(with.firstETA) || with.etaSlipped {
		t.Errorf("gang started %s, ETA %s (slipped %v): the stream delayed it", with.gangStart, with.firstETA, with.etaSlipped)
	}
	if with.backfilled == 0 {
		t.Errorf("no small job backfilled while the gang waited: reservations block too much")
	}
	without := runStream(t, false, 2*time.Hour)
	t.Logf("with reservations: ETA %s, start %s, %d backfilled; without: start %v, %d backfilled",
		with.firstETA.Sub(peNow), with.gangStart.Sub(peNow), with.backfilled, without.gangStart, without.backfilled)
	if !without.gangStart.IsZero() {
		t.Errorf("without reservations the gang started at %s; the scenario does not exercise starvation", without.gangStart)
	}
}

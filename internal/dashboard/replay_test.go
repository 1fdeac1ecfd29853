package dashboard

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
)

// countingReplay is a Replay over fixedSteppers that counts the fresh ones.
func countingReplay(end time.Duration) (*Replay, *int, *[]time.Duration) {
	fresh, runs := 0, []time.Duration{}
	rep := report.Report{End: sim.Seconds(end), Allocation: []report.AllocationSeries{
		{Key: "H100/exclusive", Points: []report.AllocationPoint{{T: sim.Seconds(time.Minute), Allocated: 9000}}},
		{Key: "all", Points: []report.AllocationPoint{{T: 0, Allocated: 1000}, {T: sim.Seconds(40 * time.Minute), Allocated: 5000}, {T: sim.Seconds(50 * time.Minute), Allocated: 5000}}},
	}}
	r := NewReplay(rep, func() (Stepper, error) {
		fresh++
		return &fixedStepper{snap: testSnapshot(), runs: &runs}, nil
	})
	return r, &fresh, &runs
}

func TestReplaySteps(t *testing.T) {
	for _, tc := range []struct {
		name      string
		moments   []time.Duration
		wantFresh int
		wantRuns  []time.Duration
	}{
		{"forward reuses one simulator", []time.Duration{10 * time.Minute, 20 * time.Minute, time.Hour}, 1,
			[]time.Duration{10 * time.Minute, 20 * time.Minute, time.Hour}},
		{"back in time starts afresh", []time.Duration{time.Hour, 10 * time.Minute}, 2,
			[]time.Duration{time.Hour, 10 * time.Minute}},
		{"a moment seen before comes from the cache", []time.Duration{time.Hour, 10 * time.Minute, time.Hour}, 2,
			[]time.Duration{time.Hour, 10 * time.Minute}},
		{"t=0 runs only the first instant", []time.Duration{0}, 1, []time.Duration{time.Nanosecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, fresh, runs := countingReplay(2 * time.Hour)
			for _, at := range tc.moments {
				s, err := r.Snapshot(context.Background(), at)
				if err != nil {
					t.Fatal(err)
				}
				if want := max(at, time.Nanosecond); s.Elapsed != want {
					t.Errorf("snapshot for %s shows %s", at, s.Elapsed)
				}
			}
			if *fresh != tc.wantFresh {
				t.Errorf("%d fresh simulators, want %d", *fresh, tc.wantFresh)
			}
			if !reflect.DeepEqual(*runs, tc.wantRuns) {
				t.Errorf("RunUntil calls %v, want %v", *runs, tc.wantRuns)
			}
		})
	}
}

func TestReplayRefusesTimesOutsideTheRun(t *testing.T) {
	r, _, _ := countingReplay(2 * time.Hour)
	for _, at := range []time.Duration{-time.Second, 2*time.Hour + time.Second} {
		if _, err := r.Snapshot(context.Background(), at); err == nil || !strings.Contains(err.Error(), "outside the simulated run 0s..2h00m") {
			t.Errorf("at %s: error %v, want one naming the run's span", at, err)
		}
	}
}

func TestReplayCacheIsBounded(t *testing.T) {
	r, _, _ := countingReplay(2 * time.Hour)
	for i := 0; i < replayCacheSize+10; i++ {
		if _, err := r.Snapshot(context.Background(), time.Duration(i)*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.cache) != replayCacheSize || len(r.order) != replayCacheSize {
		t.Fatalf("cache holds %d snapshots (%d keys), want %d", len(r.cache), len(r.order), replayCacheSize)
	}
	if _, ok := r.cache[0]; ok {
		t.Error("the oldest snapshot is still cached")
	}
}

func TestReplayTimelineDefaultsToTheBusiestMoment(t *testing.T) {
	r, _, _ := countingReplay(2 * time.Hour)
	tl := r.Timeline()
	if !tl.Seekable || tl.End != 2*time.Hour || tl.Default != 40*time.Minute {
		t.Fatalf("timeline %+v, want seekable to 2h showing 40m (the first peak of the \"all\" series)", tl)
	}
}

package dashboard

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gantry-sched/gantry/pkg/sim/report"
	"github.com/gantry-sched/gantry/pkg/view"
)

// Stepper is a simulation that only runs forward: RunUntil processes every event at or
// before t (0 meaning every event, as pkg/sim's Simulator), View is the scheduler now.
type Stepper interface {
	RunUntil(t time.Duration) error
	Now() time.Duration
	View() view.Snapshot
}

// replayCacheSize bounds the snapshots Replay keeps: a time slider asks for the same few
// moments again and again, and a snapshot of a large cluster is not small.
const replayCacheSize = 32

// Replay is the Source of a finished simulation. The snapshot at a time comes from a
// Stepper run to that time: the current one when the time lies ahead of it, else a
// fresh one from newStepper, so moving forward costs only the events in between and
// every answer is what a fresh run to that time gives (the simulator is deterministic).
type Replay struct {
	rep        report.Report
	end, def   time.Duration
	newStepper func() (Stepper, error)

	mu    sync.Mutex
	cur   Stepper
	cache map[time.Duration]view.Snapshot
	order []time.Duration // cache keys, oldest first
}

// NewReplay serves the run that rep measured; newStepper builds a fresh simulation of
// the same inputs and options (no observers needed).
func NewReplay(rep report.Report, newStepper func() (Stepper, error)) *Replay {
	return &Replay{
		rep: rep, end: time.Duration(rep.End), def: busiest(rep),
		newStepper: newStepper, cache: map[time.Duration]view.Snapshot{},
	}
}

// Timeline implements Source: from 0 to the end of the run, showing the busiest moment
// first (the end of a run is usually an empty cluster).
func (r *Replay) Timeline() Timeline {
	return Timeline{Seekable: true, End: r.end, Default: r.def}
}

// WriteCharts implements Source with the simulation report's charts.
func (r *Replay) WriteCharts(_ context.Context, w io.Writer) error {
	return report.WriteCharts(w, r.rep)
}

// Snapshot implements Source: the scheduler at simulated time at.
func (r *Replay) Snapshot(ctx context.Context, at time.Duration) (view.Snapshot, error) {
	if at < 0 || at > r.end {
		return view.Snapshot{}, fmt.Errorf("at %s: outside the simulated run 0s..%s", formatDuration(at), formatDuration(r.end))
	}
	if err := ctx.Err(); err != nil {
		return view.Snapshot{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.cache[at]; ok {
		return s, nil
	}
	s, err := r.step(at)
	if err != nil {
		return view.Snapshot{}, err
	}
	r.remember(at, s)
	return s, nil
}

// step runs a simulation to at and takes its view; r.mu is held.
func (r *Replay) step(at time.Duration) (view.Snapshot, error) {
	through := at
	if through == 0 {
		// RunUntil(0) runs every event: t=0 is the first instant, the next one the clock
		// tells apart is 1ns (as `gantry explain --at 0s`).
		through = time.Nanosecond
	}
	if r.cur == nil || r.cur.Now() > through {
		s, err := r.newStepper()
		if err != nil {
			return view.Snapshot{}, fmt.Errorf("replay to %s: %w", formatDuration(at), err)
		}
		r.cur = s
	}
	if err := r.cur.RunUntil(through); err != nil {
		r.cur = nil // a failed run is not stepped further
		return view.Snapshot{}, fmt.Errorf("replay to %s: %w", formatDuration(at), err)
	}
	return r.cur.View(), nil
}

// remember caches a snapshot, dropping the oldest beyond replayCacheSize; r.mu is held.
func (r *Replay) remember(at time.Duration, s view.Snapshot) {
	if len(r.order) >= replayCacheSize {
		delete(r.cache, r.order[0])
		r.order = r.order[1:]
	}
	r.cache[at] = s
	r.order = append(r.order, at)
}

// busiest is the first moment of the run's highest GPU allocation ("all" series), 0
// when the report has none.
func busiest(rep report.Report) time.Duration {
	for _, a := range rep.Allocation {
		if a.Key != "all" {
			continue
		}
		var best report.AllocationPoint
		for _, p := range a.Points {
			if p.Allocated > best.Allocated {
				best = p
			}
		}
		return time.Duration(best.T)
	}
	return 0
}

package dashboard

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
)

// NewSimulation is the Replay of objs simulated with opts, whose whole run rep measured
// (the report `gantry simulate` prints). Every snapshot comes from a simulator of the
// same objects and options, without the run's observers (a replay to a moment needs no
// KPIs, event log or progress bar).
func NewSimulation(objs *api.Objects, opts sim.Options, rep report.Report) *Replay {
	opts.Observers, opts.KeepLog = nil, false
	return NewReplay(rep, func() (Stepper, error) { return sim.New(objs, opts) })
}

// RunSimulation simulates objs with opts to the end (or opts.Until), measuring the run
// as `gantry simulate` does, and returns its Replay.
func RunSimulation(objs *api.Objects, opts sim.Options, kpi report.KPIOptions) (*Replay, report.Report, error) {
	kpis := report.NewKPICollector(kpi)
	run := opts
	run.Observers = append(append([]sim.Observer(nil), opts.Observers...), kpis)
	s, err := sim.New(objs, run)
	if err != nil {
		return nil, report.Report{}, err
	}
	if err := s.Run(); err != nil {
		return nil, report.Report{}, fmt.Errorf("simulate: %w", err)
	}
	rep := kpis.Report(sim.Seconds(s.Now()))
	return NewSimulation(objs, opts, rep), rep, nil
}

package cli

import (
	"io"
	"time"

	"github.com/gantry-sched/gantry/pkg/bench"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// benchMeter is the progress meter of a `gantry bench` command on stderr: nil beside
// -o json|yaml, whose output is for programs.
func benchMeter(stderr io.Writer, output outputFormat) *progressMeter {
	if output.machine() {
		return nil
	}
	return newProgressMeter(stderr, time.Now)
}

// simRun is the progress of one simulation of a bench command on m (nil when m is):
// its observers for sim.Options or bench.RunJCT / RunScale, and done for its end.
func simRun(m *progressMeter, total int, prefix string) (*progress, []sim.Observer) {
	if m == nil {
		return nil, nil
	}
	p := newSimProgress(m, total, prefix)
	if p == nil {
		return nil, nil
	}
	return p, []sim.Observer{p}
}

// endSimRun ends p's bar (a nil p has none).
func endSimRun(p *progress) {
	if p != nil {
		p.done()
	}
}

// stepMeter reports a bench.Progress (pods placed, cycles timed) on a meter; detail
// says where the run is. A nil stepMeter reports nothing.
type stepMeter struct {
	m           *progressMeter
	unit        string
	detail      func() string
	done, total int
}

func newStepMeter(m *progressMeter, unit string, detail func() string) *stepMeter {
	if m == nil {
		return nil
	}
	return &stepMeter{m: m, unit: unit, detail: detail}
}

// progress is the callback for the bench package's options (nil for a nil meter, so
// the run does not even call it).
func (s *stepMeter) progress() bench.Progress {
	if s == nil {
		return nil
	}
	return func(done, total int) {
		s.done, s.total = done, total
		s.m.update(s.state)
	}
}

func (s *stepMeter) state() progressState {
	return progressState{done: s.done, total: s.total, unit: s.unit, detail: s.detail()}
}

// finish ends the bar (before a line of the command's own on stderr).
func (s *stepMeter) finish() {
	if s != nil {
		s.m.finish(s.state())
	}
}

package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/sim"
)

// progressMeter paces the progress reports of a long run, on stderr: a one-line bar
// redrawn in place on a terminal (at most every progressRedraw); elsewhere (a pipe, a
// CI log) a plain line every progressEvery of wall time, the first after
// progressAfter, so a short run prints nothing. The wall clock is injected: what is
// measured (a simulation, an experiment) never reads one for this. Commands create it
// only for table output: never beside -o json|yaml.
type progressMeter struct {
	w           io.Writer
	terminal    bool
	now         func() time.Time
	start, last time.Time
	lines       int
}

// progressState is what one report says: done of total (the bar's fill), what is
// counted, and a detail ("simulated t=1h2m").
type progressState struct {
	done, total int
	unit        string
	detail      string
}

const (
	progressAfter  = 2 * time.Second
	progressEvery  = 10 * time.Second
	progressRedraw = 100 * time.Millisecond
)

func newProgressMeter(w io.Writer, now func() time.Time) *progressMeter {
	m := &progressMeter{w: w, now: now, start: now()}
	m.last = m.start.Add(progressAfter - progressEvery) // first line after progressAfter
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			m.terminal = true
		}
	}
	return m
}

// update reports state() when a report is due; state is not called otherwise.
func (m *progressMeter) update(state func() progressState) {
	now := m.now()
	switch {
	case m.terminal && now.Sub(m.last) >= progressRedraw:
		m.last = now
		m.draw(state())
	case !m.terminal && now.Sub(m.last) >= progressEvery:
		m.last = now
		m.line(state(), now)
	}
}

// finish ends the bar on a terminal; off a terminal a run long enough to have reported
// gets its last line too.
func (m *progressMeter) finish(st progressState) {
	switch {
	case m.terminal:
		m.draw(st)
		fmt.Fprintln(m.w)
	case m.lines > 0:
		m.line(st, m.now())
	}
}

func (m *progressMeter) draw(st progressState) {
	const width = 30
	filled := 0
	if st.total > 0 {
		filled = min(st.done, st.total) * width / st.total
	}
	fmt.Fprintf(m.w, "\r[%s%s] %s ", strings.Repeat("#", filled), strings.Repeat(".", width-filled), st.summary())
}

func (m *progressMeter) line(st progressState, now time.Time) {
	m.lines++
	fmt.Fprintf(m.w, "progress: %s, %s elapsed\n", st.summary(), now.Sub(m.start).Round(time.Second))
}

func (st progressState) summary() string {
	s := fmt.Sprintf("%d/%d %s", st.done, st.total, st.unit)
	if st.detail != "" {
		s += ", " + st.detail
	}
	return s
}

// progress is a simulation's progress, a sim.Observer: workloads finished of those
// submitted, and the simulated time reached.
type progress struct {
	meter           *progressMeter
	prefix          string // before the detail: "policy gantry (2/3), "
	total, finished int
	events          int
	t               sim.Seconds
}

// newProgress returns the progress reporter of one simulation for w, nil when there is
// nothing to count.
func newProgress(w io.Writer, total int, now func() time.Time) *progress {
	return newSimProgress(newProgressMeter(w, now), total, "")
}

// newSimProgress reports one simulation of several on a shared meter (nil when there is
// nothing to count); prefix says which.
func newSimProgress(m *progressMeter, total int, prefix string) *progress {
	if total == 0 {
		return nil
	}
	return &progress{meter: m, total: total, prefix: prefix}
}

func (p *progress) OnEvent(r sim.EventRecord) {
	p.events++
	p.t = r.T
	if r.Event == sim.EvFinished {
		p.finished++
	}
	if p.events%512 == 0 { // reading the clock on every event would cost more than the event
		p.meter.update(p.state)
	}
}

func (p *progress) OnSample(sim.ClusterState) {}

// OnDelta: the progress line reads no state either.
func (p *progress) OnDelta(sim.StateDelta) {}

func (p *progress) state() progressState {
	return progressState{done: p.finished, total: p.total, unit: "workloads finished",
		detail: p.prefix + "simulated t=" + sim.FormatDuration(p.t)}
}

func (p *progress) done() { p.meter.finish(p.state()) }

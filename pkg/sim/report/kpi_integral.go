package report

import "time"

// The collector integrates sampled values over a clock that is the sum of the sampled
// intervals in whole milliseconds (an interval under 1ms adds nothing, as when every
// sample added value × its interval). A value is integrated only when it changes:
// value × (a sum of intervals) is the sum of value × each interval, in integers with
// wrap-around too, so the totals are exactly those of adding at every sample while a
// sample costs nothing for the values it leaves alone.

// advance moves the clock over [prev sample, t).
func (c *KPICollector) advance(t time.Duration) {
	if dt := (t - c.prevT.Duration()).Milliseconds(); dt > 0 {
		c.clock += dt
	}
}

// integral is ∫ value dt of one piecewise-constant value, in value × ms.
type integral struct{ value, sum, since int64 }

// set closes the current value's piece at clock and starts v's.
func (g *integral) set(v, clock int64) {
	g.sum += g.value * (clock - g.since)
	g.value, g.since = v, clock
}

// at is the integral up to clock.
func (g *integral) at(clock int64) int64 { return g.sum + g.value*(clock-g.since) }

// through is the integral up to clock and on for tail ms past it (a report's end).
func (g *integral) through(clock, tail int64) int64 { return g.at(clock) + g.value*tail }

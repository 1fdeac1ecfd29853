package bench

// Progress receives how far a run got: done of total steps (pods placed in a frag run,
// cycles timed). It is called from the run's goroutine and must be quick; the CLI uses
// it for its progress line. nil reports nothing.
type Progress func(done, total int)

// report calls p when it is set.
func (p Progress) report(done, total int) {
	if p != nil {
		p(done, total)
	}
}

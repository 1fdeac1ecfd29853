package plan

import "fmt"

// Phase is where a workload is in its life.
type Phase string

// The lifecycle: Pending → Admitted (quota + placement) → Running → Finished; a running
// or admitted workload may get a preemption notice (Preempting) and is then Evicted, or
// is Evicted at once (node failure); an evicted workload is Requeued and pending again.
const (
	Pending    Phase = "Pending"
	Admitted   Phase = "Admitted"
	Running    Phase = "Running"
	Preempting Phase = "Preempting"
	Evicted    Phase = "Evicted"
	Requeued   Phase = "Requeued"
	Finished   Phase = "Finished"
)

// next lists the allowed next phases of a phase (a function, not a package map, so there
// is no package-level state); known is false for an unknown phase.
func next(from Phase) (allowed []Phase, known bool) {
	switch from {
	case Pending:
		return []Phase{Admitted}, true
	case Admitted:
		return []Phase{Running, Preempting, Evicted}, true
	case Running:
		return []Phase{Finished, Preempting, Evicted}, true
	case Preempting:
		return []Phase{Evicted, Finished}, true
	case Evicted:
		return []Phase{Requeued}, true
	case Requeued:
		return []Phase{Pending, Admitted}, true
	case Finished:
		return nil, true
	}
	return nil, false
}

// CanTransition reports whether a workload may go from one phase to the next.
func CanTransition(from, to Phase) bool {
	allowed, _ := next(from)
	for _, p := range allowed {
		if p == to {
			return true
		}
	}
	return false
}

// Transition returns to when the move is allowed, else an error naming the workload.
func Transition(workload string, from, to Phase) (Phase, error) {
	if _, known := next(from); !known {
		return from, fmt.Errorf("workload %s: unknown phase %q", workload, from)
	}
	if !CanTransition(from, to) {
		return from, fmt.Errorf("workload %s: cannot go from %s to %s", workload, from, to)
	}
	return to, nil
}

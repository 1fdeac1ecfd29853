package sim

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/api"
)

// SetArrivalPriority sets the priority of a workload that has not arrived yet. A
// policy that ranks jobs by what it learns while the simulation runs (a run time
// predicted from the jobs finished so far, as Helios' QSSF does) decides a job's
// priority just before the job arrives: between two instants, from an Observer. Once
// submitted the engine has ranked the workload (its equivalence class and its place in
// the queue hold the priority), so a later change is refused.
//
// The workload is the one in the objects handed to New, so the caller's copy changes
// too.
func (s *Simulator) SetArrivalPriority(id api.WorkloadID, priority int32) error {
	st, ok := s.wls[id]
	if !ok {
		return fmt.Errorf("workload %s: not found in the manifests", id)
	}
	if st.submitted {
		return fmt.Errorf("workload %s: submitted at %s, its priority is fixed", id, FormatDuration(Seconds(st.w.Timing.SubmitAt)))
	}
	st.w.Priority = priority
	return nil
}

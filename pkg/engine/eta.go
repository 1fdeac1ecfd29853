package engine

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Ending is an admitted workload of a cohort tree and when it is expected to end.
type Ending struct {
	Workload api.WorkloadID
	At       time.Time
}

// ReservationETABasis says what a reservation's ETA rests on.
const ReservationETABasis = "reservation: placement planned the gang on the GPUs running workloads free"

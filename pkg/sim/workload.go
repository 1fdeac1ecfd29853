package sim

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// wlState is the simulator's record of one workload's life.
type wlState struct {
	id           api.WorkloadID // w.ID(), kept: the hot paths ask for it often
	w            *api.Workload
	clusterQueue string
	phase        plan.Phase
	viewAt       int // its place in the running views (runningCache), -1 when not running
	submitted    bool
	queuedAt     time.Duration
	failures     int // evictions by node failures (the requeue backoff counts them)
	// readyDelay is how long the current run's pods take to get Ready (neverReady:
	// never); its work starts then. waitingReady: they are not Ready yet.
	// readyTimeouts counts its waitForPodsReady evictions (podsready.go).
	readyDelay    time.Duration
	waitingReady  bool
	readyTimeouts int
	heldForReady  bool // blockAdmission held it since its last start (logged once)
	// run counts starts; events carry it so a finish scheduled for an earlier run is
	// ignored after an eviction.
	run        int
	startedAt  time.Duration
	base       time.Duration // progress when the current run started
	saved      time.Duration // progress saved by the last checkpoint
	assignment admission.Assignment
	bindings   []plan.Binding
	// pods and capacityType are the current run's bound pods and node capacity type,
	// for the engine's running view (set at start).
	pods         []cluster.PodRef
	capacityType string
	gpuMilli     resources.MilliGPU
	preemptions  int
	firstStart   time.Duration
	started      bool
	finishedAt   time.Duration
	// fitChecked is 1 + the node-set version its never-fits check ran at (0: never).
	fitChecked int
}

// progressAt is the work done by time t in the current run.
func (s *wlState) progressAt(t time.Duration) time.Duration {
	if s.phase != plan.Running && s.phase != plan.Preempting {
		return s.base
	}
	return s.base + s.workedBy(t)
}

// workedBy is the run's working time by t: from when its pods got Ready.
func (s *wlState) workedBy(t time.Duration) time.Duration {
	if d := t - s.startedAt - s.readyDelay; d > 0 {
		return d
	}
	return 0
}

// checkpointAt is the progress saved by periodic checkpoints by time t.
func (s *wlState) checkpointAt(t time.Duration) time.Duration {
	every := s.w.Timing.CheckpointEvery
	if every <= 0 {
		return s.saved
	}
	elapsed := s.workedBy(t)
	periodic := s.base + (elapsed/every)*every
	if periodic > s.saved {
		return periodic
	}
	return s.saved
}

// remaining is the run time still needed to finish; 0 means it runs until the end.
func (s *wlState) remaining() time.Duration {
	if s.w.Timing.Duration <= 0 {
		return 0
	}
	return s.w.Timing.Duration - s.base
}

package controller_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/controller"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// parityScenarios are the directories of testdata/parity. horizon is the last
// simulated instant compared: every instant of the simulation up to it (0: the first
// scheduling instant only) is replayed on the cluster.
var parityScenarios = []struct {
	name    string
	horizon time.Duration
}{
	{"flavor-fallback", 0},
	{"hold-and-drain", 0},
	{"namespace-selector", 0},
	{"queue-scorer", 0},
	// Two urgent jobs arrive at 1m; the budget lets one preempt; its victim leaves
	// after the 2m notice, at 3m.
	{"disruption-budget", 3 * time.Minute},
	// The urgent job arrives at 1m and must not preempt.
	{"within-cluster-queue-never", time.Minute},
	// The gang reserves for 2h; the backfilled job ends at 1h, the long runs at 2h.
	{"reservation-eta", 2 * time.Hour},
	{"pytorchjob-gang", 0},
	{"mig-gang", 0},
}

// TestParity: what `gantry simulate` decides is what `gantry controller` does. Each
// scenario (a directory of manifests as a user writes them, Kueue objects included)
// runs through the simulator as the CLI runs it, and, converted by `gantry convert`,
// through the controller on the test control plane, its clock set to the simulator's
// instants. At every instant the two must agree on where every workload stands
// (admitted, under preemption notice and for whom, reserved with which ETA and nodes,
// pending and why), on what was admitted at that instant and in which order, and on
// the flavors, nodes and devices of every pod, in the Workload status and on the bound
// pods.
//
// On the cluster the test plays what a simulated instant implies: jobs are created at
// their gantry.dev/submit-at, the pods of jobs whose gantry.dev/duration ends succeed
// (the kubelet), PyTorchJob pods are made by the test (the training operator), and a
// preemption deadline passes by moving the controller's clock. The first instant whose
// decisions differ ends the scenario: later instants would only replay the difference.
func TestParity(t *testing.T) {
	env := controller.ParityEnv(t)
	for _, sc := range parityScenarios {
		t.Run(sc.name, func(t *testing.T) {
			pol := engine.DefaultPolicy()
			log := runSimulate(t, filepath.Join("testdata", "parity", sc.name), pol)
			h := newParityCluster(t, env, filepath.Join("testdata", "parity", sc.name))
			h.applyCluster()
			h.startKubelet()
			h.watchAdmissions()
			for i, at := range instants(log, sc.horizon) {
				passes, _ := h.passes() // the last instant settled: no pass is running
				h.setClock(at)
				h.finish(eventsAt(log, string(sim.EvFinished), at))
				h.createJobs(eventsAt(log, string(sim.EvSubmitted), at))
				if i == 0 {
					h.startController(pol)
				} else {
					h.tick()
				}
				submitted := submittedBy(log, at)
				if why := h.settle(submitted, passes); why != "" {
					t.Errorf("t=%s: the controller did not settle within %s: %s", at, paritySettle, why)
				}
				ctl, err := h.observe(at, submitted)
				if err != nil {
					t.Fatal(err)
				}
				if h.admissions.closedEarly() {
					t.Fatalf("t=%s: the watch on Workloads missed events; the admission order cannot be read", at)
				}
				diffs := diffDecisions(simDecisions(log, at), ctl)
				for _, d := range diffs {
					t.Error(d)
				}
				if len(diffs) > 0 {
					if last := instants(log, sc.horizon); at != last[len(last)-1] {
						t.Logf("instants after t=%s not compared: the decisions differ already", at)
					}
					return
				}
			}
		})
	}
}

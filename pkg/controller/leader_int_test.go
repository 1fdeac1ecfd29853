package controller

import (
	"context"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/prometheus/client_golang/prometheus"
)

// TestStandbyTakesOver: two replicas with leader election, both as the shipped roles'
// service account (the leader election Role included). The leader admits a Job; when
// it stops, the standby takes the Lease and admits the next one, and no device is
// given twice.
func TestStandbyTakesOver(t *testing.T) {
	f := newFixture(t)
	f.h100Queue("le-1", 8, "le-cq", "8")
	identity := f.shippedIdentity()
	start := func() (context.CancelFunc, chan struct{}) {
		mgr, _, err := NewManager(identity, ManagerOptions{
			Controller:  Options{Interval: 100 * time.Millisecond, Seed: 1},
			MetricsAddr: "0", HealthAddr: "0", Log: testLogger(), Registry: prometheus.NewRegistry(),
			LeaderElection: true, LeaderElectionNamespace: f.ns,
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(f.ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := mgr.Start(ctx); err != nil {
				t.Errorf("manager: %v", err)
			}
		}()
		return cancel, done
	}
	stopLeader, leaderDone := start()
	f.create(k8s.MakeJob("", "first").Queue("lq").Pods(1).GPUs("4").Obj())
	f.waitBound("first", 1)
	stopStandby, standbyDone := start()
	defer func() { stopStandby(); <-standbyDone }()

	stopLeader()
	<-leaderDone
	f.create(k8s.MakeJob("", "second").Queue("lq").Pods(1).GPUs("4").Obj())
	f.waitBound("second", 1) // within waitBound's 30 s: the Lease was handed back
	f.assertNoDeviceSharedTwice()
}

package api

import (
	"fmt"
	"time"
)

// AnnotationPodReadyDelay on a NodePool or a v1 Node is how long the pods bound there
// take to become Ready (image pull, init containers): a duration ("90s", "5m") or
// PodReadyNever for a node whose pods never become Ready (a bad image, a broken CNI),
// the fault Kueue's waitForPodsReady timeout exists for. Only the simulator reads it.
const AnnotationPodReadyDelay = "gantry.dev/pod-ready-delay"

// PodReadyNever is the AnnotationPodReadyDelay value of a node whose pods never get Ready.
const PodReadyNever = "never"

// ReasonPodsReadyTimeout is Kueue's eviction reason for a workload whose pods were not
// all Ready within waitForPodsReady.timeout of its admission.
const ReasonPodsReadyTimeout = "PodsReadyTimeout"

// RequeuingTimestamp is which time orders a workload requeued after a PodsReadyTimeout.
type RequeuingTimestamp string

const (
	// RequeueAtEviction queues it behind what arrived before its eviction (Kueue's default).
	RequeueAtEviction RequeuingTimestamp = "Eviction"
	// RequeueAtCreation puts it back at its original place in the queue.
	RequeueAtCreation RequeuingTimestamp = "Creation"
)

// Kueue's defaults for waitForPodsReady (config v1beta1: 5m timeout, v1beta2: 30m).
const (
	PodsReadyTimeoutV1beta1   = 5 * time.Minute
	PodsReadyTimeoutV1beta2   = 30 * time.Minute
	PodsReadyBackoffBase      = 60 * time.Second
	PodsReadyBackoffMax       = 3600 * time.Second
	podsReadyTimestampDefault = RequeueAtEviction
)

// WaitForPodsReady is Kueue's waitForPodsReady, enabled: an admitted workload whose pods
// are not all Ready within Timeout is evicted (ReasonPodsReadyTimeout) and requeued
// after a backoff; with BlockAdmission nothing else is admitted while an admitted
// workload's pods are not all Ready (admissions one at a time, Kueue's guard against
// two gangs deadlocking on physical capacity their quota does not reflect).
type WaitForPodsReady struct {
	Timeout        time.Duration
	BlockAdmission bool
	// RecoveryTimeout is read and validated; Gantry's simulator evicts a whole gang at
	// once when a node under it fails, so no admitted workload waits for a replacement
	// pod and this timeout never runs (0: disabled, as in Kueue).
	RecoveryTimeout time.Duration
	Requeuing       PodsReadyRequeuing
	Source          Source // the Configuration it was read from; empty from flags
}

// PodsReadyRequeuing is waitForPodsReady.requeuingStrategy: after its n-th timeout a
// workload waits BackoffBase·2^(n-1), at most BackoffMax; with a limit L, the
// (L+1)-th timeout deactivates it (it is not tried again until it changes).
type PodsReadyRequeuing struct {
	Timestamp   RequeuingTimestamp
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// Limited says BackoffLimit applies; Kueue's backoffLimitCount: 0 deactivates at the
	// first timeout, which no plain "0: unlimited" integer could say.
	Limited      bool
	BackoffLimit int
}

// DefaultWaitForPodsReady is waitForPodsReady enabled with Kueue's defaults for the
// given timeout (the defaults differ by config version) and blockAdmission.
func DefaultWaitForPodsReady(timeout time.Duration, block bool) WaitForPodsReady {
	return WaitForPodsReady{
		Timeout: timeout, BlockAdmission: block, RecoveryTimeout: timeout,
		Requeuing: PodsReadyRequeuing{Timestamp: podsReadyTimestampDefault, BackoffBase: PodsReadyBackoffBase, BackoffMax: PodsReadyBackoffMax},
	}
}

// Validate reports a setting the simulator cannot run with, naming the Configuration
// field it comes from.
func (w WaitForPodsReady) Validate() error {
	r := w.Requeuing
	switch {
	case w.Timeout <= 0:
		return fmt.Errorf("waitForPodsReady.timeout %s: must be positive", w.Timeout)
	case w.RecoveryTimeout < 0:
		return fmt.Errorf("waitForPodsReady.recoveryTimeout %s: must not be negative", w.RecoveryTimeout)
	case r.Timestamp != RequeueAtEviction && r.Timestamp != RequeueAtCreation:
		return fmt.Errorf("waitForPodsReady.requeuingStrategy.timestamp %q: want %s or %s", r.Timestamp, RequeueAtEviction, RequeueAtCreation)
	case r.BackoffBase < 0:
		return fmt.Errorf("waitForPodsReady.requeuingStrategy.backoffBaseSeconds %s: must not be negative", r.BackoffBase)
	case r.BackoffMax < 0:
		return fmt.Errorf("waitForPodsReady.requeuingStrategy.backoffMaxSeconds %s: must not be negative", r.BackoffMax)
	case r.BackoffMax > 0 && r.BackoffMax < r.BackoffBase:
		return fmt.Errorf("waitForPodsReady.requeuingStrategy.backoffMaxSeconds %s: must not be below backoffBaseSeconds %s", r.BackoffMax, r.BackoffBase)
	case r.BackoffLimit < 0:
		return fmt.Errorf("waitForPodsReady.requeuingStrategy.backoffLimitCount %d: must not be negative", r.BackoffLimit)
	}
	return nil
}

package controller

import "github.com/gantry-sched/gantry/pkg/plan"

// Names of the labels, annotations and values the controller reads and writes. They
// are the contract with users, with Gantry's device plugin and with training
// frameworks; docs/kubernetes.md describes them.
const (
	// SchedulerName is the spec.schedulerName of pods Gantry binds.
	SchedulerName = "gantry"

	// AnnotationDevices lists the device IDs a pod was given, comma separated
	// ("GPU-0,GPU-1", "GPU-3/mig-1g.10gb@4", "GPU-2/replica-1"). It is written before
	// the pod is bound and never changed afterwards; the device plugin honours it.
	AnnotationDevices = "gantry.dev/devices"
	// AnnotationWorkload names the Workload ("namespace/name") a bound pod belongs to.
	AnnotationWorkload = "gantry.dev/workload"
	// AnnotationPodSlot names the planned slot ("<pod set>-<index>") a pod fills.
	AnnotationPodSlot = "gantry.dev/pod-slot"
	// AnnotationPreemptionNotice is set on a victim's Job and pods when Gantry decides
	// to preempt it: the RFC 3339 time after which it is evicted. Frameworks watch it
	// to checkpoint.
	AnnotationPreemptionNotice = "gantry.dev/preemption-notice"
	// AnnotationPreemptedBy names the workload ("namespace/name") that last preempted
	// this one; it stays after eviction so preemption chains cannot cycle.
	AnnotationPreemptedBy = "gantry.dev/preempted-by"
	// AnnotationPreemptionReason says why (reason code and the preemptor).
	AnnotationPreemptionReason = "gantry.dev/preemption-reason"
	// AnnotationNominatedVictims is set on a pending preemptor: the workloads
	// ("namespace/name", comma separated, in notice order) it has preempted during its
	// current wait. The engine never preempts one of them twice in the same wait
	// (engine.Input.Nominated). It is removed when the preemptor is admitted or
	// evicted, and goes with the object when it is deleted.
	AnnotationNominatedVictims = "gantry.dev/nominated-victims"
	// AnnotationPreemptionHistory is set on a preempted workload with each notice: a
	// JSON list of {"at", "queue", "gpuMilli"} (newest last, at most
	// maxHistoryRecords), its preemptions as disruption budgets count them. Like
	// AnnotationPreemptedBy it stays after eviction, so a restarted controller counts
	// the budgets' windows as the last one did.
	AnnotationPreemptionHistory = "gantry.dev/preemption-history"
	// AnnotationReservation is set on a pending workload holding a backfill reservation:
	// JSON {"eta", "pods": [{"podSet", "index", "node", "devices"}], "waits"}, the plan
	// status.eta summarises. A restarted controller hands it back to the engine, which
	// keeps it while it is valid, so the ETA does not move. It is removed when the
	// workload is admitted or loses the reservation.
	AnnotationReservation = "gantry.dev/reservation"
	// AnnotationFailures counts the evictions of a workload by failures (unhealthy
	// devices): the requeue backoff grows with it, and a restart reads it back.
	AnnotationFailures = "gantry.dev/failures"

	// LabelWorkload is set on Workloads made from a job, naming the job kind.
	LabelJobKind = "gantry.dev/job-kind"

	// Reason codes written to Workload conditions besides the engine's own (plan.Reason).
	ReasonPending   = "Pending"
	ReasonAdmitted  = "Admitted"
	ReasonPreempted = "Preempted"
	ReasonEvicted   = "Evicted"
	ReasonSucceeded = "Succeeded"
	ReasonFailed    = "Failed"
	// ReasonInvalid: the job or Workload cannot be turned into a workload the engine takes.
	ReasonInvalid = string(plan.ReasonInvalidWorkload)
	// ReasonReserved: quota fits, the nodes do not yet; capacity is reserved (the
	// message says where and why, status.eta when).
	ReasonReserved = "Reserved"
	// ReasonEvictionBlocked: a PodDisruptionBudget refused an eviction; it is retried.
	ReasonEvictionBlocked = "EvictionBlocked"
	// ReasonDeviceUnhealthy: a device the workload runs on was reported unhealthy.
	ReasonDeviceUnhealthy = "DeviceUnhealthy"
	// ReasonNodeLost: a node the workload is placed on was deleted, stayed NotReady past
	// Options.NodeLostAfter, or took a NoExecute taint its pods do not tolerate.
	ReasonNodeLost = plan.EvictNodeLost
)

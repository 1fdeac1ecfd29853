package plan_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// Evidence as the engine builds it, shared by the cases below.
var (
	// quotaWait is admission's answer for a 4-GPU master and 24-GPU workers when 16 of
	// the queue's 24 H100s are free.
	quotaWait = &admission.Assignment{Mode: admission.Preempt, Code: admission.WaitingForQuota,
		Message: `pod set "worker": flavor h100: needs 24 nvidia.com/gpu in flavor h100, 16 free of nominal 24, cannot borrow: cohort global has 0 unused`,
		PodSets: []admission.PodSetAssignment{
			{Name: "master", Tried: []admission.FlavorAttempt{{Flavor: "h100", Mode: admission.Fit,
				Reasons: []admission.Why{{Text: "needs 8 nvidia.com/gpu in flavor h100, 24 free of nominal 24"}}}}},
			{Name: "worker", Tried: []admission.FlavorAttempt{{Flavor: "h100", Mode: admission.Preempt, Code: admission.WaitingForQuota,
				Reasons: []admission.Why{{Text: "needs 24 nvidia.com/gpu in flavor h100, 16 free of nominal 24"}, {Text: "cannot borrow: cohort global has 0 unused"}}}}},
		}}
	quotaWaitLines = []string{
		`pod set "worker": flavor h100: needs 24 nvidia.com/gpu in flavor h100, 16 free of nominal 24, cannot borrow: cohort global has 0 unused`,
		"pod set master, flavor h100: Fit: needs 8 nvidia.com/gpu in flavor h100, 24 free of nominal 24",
		"pod set worker, flavor h100: Preempt (WaitingForQuota): needs 24 nvidia.com/gpu in flavor h100, 16 free of nominal 24; cannot borrow: cohort global has 0 unused",
	}
	// noFlavor is admission's NoFit for a pod set no flavor admits (a flavor without
	// reasons renders its mode and code only).
	noFlavor = &admission.Assignment{Mode: admission.NoFit, Code: admission.NoFlavorMatches,
		PodSets: []admission.PodSetAssignment{{Name: "main", Tried: []admission.FlavorAttempt{
			{Flavor: "spot", Mode: admission.NoFit, Code: admission.NoFlavorMatches}}}}}
	// diag is placement's account: 1 of 4 nodes takes a pod, not the gang of 2.
	diag = &placement.Diagnosis{Workload: "ns/w", PodSet: "main", Pod: 1, Placed: 1, GangSize: 2, TotalNodes: 4, FitNodes: 1,
		Counts: []placement.ReasonCount{{Key: "Taint spot=true:NoSchedule", Nodes: 3,
			Example: placement.Rejection{Reason: placement.ReasonTaint, Subject: "spot=true:NoSchedule", Detail: "not tolerated"}}}}
	diagLine  = "ns/w: pod set main pod 1: 1 of 4 nodes fit: 3 taint spot=true:NoSchedule; gang 1 of 2 pods placed"
	gangFails = &plan.PlaceFailure{Code: plan.ReasonGangDoesNotFit, Diagnosis: diag}
	// fallbacks: spot did not fit, h100 neither, then admission had nothing left.
	fallbacks = []plan.Fallback{
		{Without: []string{"spot"}, Flavors: []string{"h100"}, Place: &plan.PlaceFailure{Code: plan.ReasonNoNodeFits, Diagnosis: diag}},
		{Without: []string{"spot", "h100"}, Quota: &admission.Assignment{Mode: admission.NoFit, Message: "no flavor left"}},
	}
	// evictedAt is a failure's eviction, in a zone other than UTC (rendered in UTC).
	evictedAt     = time.Date(2026, 1, 1, 11, 0, 0, 0, time.FixedZone("CET", 3600))
	fallbackLines = []string{
		"fallback to flavor h100: NoNodeFits: " + diagLine,
		"fallback without flavor spot,h100: quota NoFit () no flavor left",
	}
)

// TestExplain: each reason renders its evidence, in the lines the Workload status,
// the event log and `gantry explain` have always shown.
func TestExplain(t *testing.T) {
	cases := []struct {
		name  string
		layer plan.Layer
		why   plan.Reason
		ev    *plan.Evidence
		want  []string
	}{
		{"LocalQueue missing", plan.LayerAdmission, plan.ReasonQueueMissing,
			&plan.Evidence{Message: `localqueue "lq" does not exist in namespace "ns"`},
			[]string{`localqueue "lq" does not exist in namespace "ns"`}},
		{"no ClusterQueue handed to the engine", plan.LayerAdmission, plan.ReasonQueueMissing,
			&plan.Evidence{Unresolved: &plan.LocalQueueRef{Namespace: "ns", Name: "lq"}},
			[]string{`LocalQueue "lq" in namespace "ns" does not resolve to a ClusterQueue`}},
		{"ClusterQueue missing", plan.LayerAdmission, plan.ReasonClusterQueueMissing,
			&plan.Evidence{Message: `localqueue ns/lq points at clusterqueue "cq", which does not exist`},
			[]string{`localqueue ns/lq points at clusterqueue "cq", which does not exist`}},
		{"namespace not selected", plan.LayerAdmission, plan.ReasonNamespaceNotSelected,
			&plan.Evidence{Message: `clusterqueue "cq"'s namespaceSelector does not select namespace "ns"`},
			[]string{`clusterqueue "cq"'s namespaceSelector does not select namespace "ns"`}},
		{"queue held", plan.LayerAdmission, plan.ReasonQueueHeld,
			&plan.Evidence{Message: "clusterqueue cq has stopPolicy Hold"}, []string{"clusterqueue cq has stopPolicy Hold"}},
		{"invalid", plan.LayerAdmission, plan.ReasonInvalidWorkload,
			&plan.Evidence{Quota: &admission.Assignment{Code: admission.InvalidWorkload, Message: "workload ns/w: no pod sets"}},
			[]string{"workload ns/w: no pod sets"}},
		{"resource not covered", plan.LayerAdmission, plan.ReasonResourceNotCovered,
			&plan.Evidence{Quota: &admission.Assignment{Code: admission.ResourceNotCovered, PodSets: []admission.PodSetAssignment{{Name: "main",
				Tried: []admission.FlavorAttempt{{Mode: admission.NoFit, Code: admission.ResourceNotCovered, Reasons: []admission.Why{{Text: "example.com/fpga is not covered"}}}}}}}},
			[]string{"pod set main: NoFit (ResourceNotCovered): example.com/fpga is not covered"}},
		{"no flavor matches", plan.LayerAdmission, plan.ReasonNoFlavorMatches, &plan.Evidence{Quota: noFlavor},
			[]string{"pod set main, flavor spot: NoFit (NoFlavorMatches)"}},
		{"exceeds max quota", plan.LayerAdmission, plan.ReasonExceedsMaxQuota,
			&plan.Evidence{Quota: &admission.Assignment{Code: admission.ExceedsMaxQuota, Message: "more than cq can ever use"}},
			[]string{"more than cq can ever use"}},
		{"inadmissible", plan.LayerAdmission, plan.ReasonInadmissible, &plan.Evidence{Quota: noFlavor},
			[]string{"pod set main, flavor spot: NoFit (NoFlavorMatches)"}},
		{"quota, no preemption", plan.LayerAdmission, plan.ReasonWaitingForQuota, &plan.Evidence{Quota: quotaWait}, quotaWaitLines},
		{"quota, no victims", plan.LayerAdmission, plan.ReasonWaitingForQuota,
			&plan.Evidence{Quota: quotaWait, Search: &admission.PreemptionResult{Code: admission.WaitingForQuota,
				Message: "no set of preemptible workloads (0 candidates) frees enough quota"}},
			append(slices.Clone(quotaWaitLines), "no set of preemptible workloads (0 candidates) frees enough quota")},
		{"quota victims noticed", plan.LayerAdmission, plan.ReasonWaitingForPreemption,
			&plan.Evidence{Victims: []api.WorkloadID{"ns/a", "ns/b"}}, []string{"victims: ns/a,ns/b"}},
		{"quota victims still leaving", plan.LayerAdmission, plan.ReasonWaitingForPreemption, &plan.Evidence{Quota: quotaWait}, quotaWaitLines},
		{"quota victim already leaving", plan.LayerAdmission, plan.ReasonWaitingForPreemption,
			&plan.Evidence{Victim: &plan.UnusableVictim{Workload: "ns/v", Why: plan.VictimLeaving}}, []string{"victim ns/v is already leaving"}},
		{"node victims noticed", plan.LayerPlacement, plan.ReasonWaitingForPreemption,
			&plan.Evidence{Victims: []api.WorkloadID{"ns/v"}, Place: gangFails, Fallbacks: fallbacks},
			append([]string{"victims: ns/v", "placement: GangDoesNotFit", diagLine}, fallbackLines...)},
		{"victim preempted this workload", plan.LayerAdmission, plan.ReasonPreemptionWouldCycle,
			&plan.Evidence{Victim: &plan.UnusableVictim{Workload: "ns/v", Why: plan.VictimPreemptedThis}},
			[]string{"victim ns/v preempted this workload before"}},
		{"victim preempted before", plan.LayerAdmission, plan.ReasonPreemptionWouldCycle,
			&plan.Evidence{Victim: &plan.UnusableVictim{Workload: "ns/v", Why: plan.VictimPreemptedBefore}},
			[]string{"victim ns/v was preempted by this workload before and started again"}},
		{"held for preemptor", plan.LayerAdmission, plan.ReasonHeldForPreemptor, &plan.Evidence{PreemptedBy: "ns/p"},
			[]string{"preempted by ns/p, which still waits for its victims"}},
		{"holds quota", plan.LayerAdmission, plan.ReasonHoldsQuota,
			&plan.Evidence{Holding: []admission.FlavorAmount{{FlavorResource: admission.FlavorResource{Flavor: "on-demand", Resource: "nvidia.com/gpu"}, Amount: 1}}},
			[]string{"holds nvidia.com/gpu@on-demand=1 of ClusterQueue cq this cycle: it needs preemption, has no victims, and its ClusterQueue cannot always reclaim what it lends"}},
		{"quota held in cycle", plan.LayerAdmission, plan.ReasonQuotaHeldInCycle, &plan.Evidence{HeldFor: []api.WorkloadID{"ns/p1", "ns/p2"}},
			[]string{"the quota it needs is held this cycle for ns/p1,ns/p2 (preemptors' victims counted as gone); tried again next cycle"}},
		{"not tried", plan.LayerAdmission, plan.ReasonNotTried, &plan.Evidence{MaxAttempts: 100},
			[]string{"more than 100 workloads pending; tried in a later cycle"}},
		{"blocked by head", plan.LayerAdmission, plan.ReasonBlockedByHead, nil,
			[]string{"StrictFIFO: an earlier workload of ClusterQueue cq is not admitted yet"}},
		{"no node fits, flavors tried", plan.LayerPlacement, plan.ReasonQuotaFitsClusterDoesNot,
			&plan.Evidence{Place: &plan.PlaceFailure{Code: plan.ReasonNoNodeFits, Diagnosis: diag}, Fallbacks: fallbacks},
			append([]string{"placement: NoNodeFits", diagLine}, fallbackLines...)},
		{"invalid for placement", plan.LayerPlacement, plan.ReasonQuotaFitsClusterDoesNot,
			&plan.Evidence{Place: &plan.PlaceFailure{Code: plan.ReasonInvalidWorkload,
				Diagnosis: &placement.Diagnosis{Workload: "ns/w", PodSet: "main", Err: "bad GPU request"}}},
			[]string{"placement: InvalidWorkload", "ns/w: pod set main pod 0: invalid: bad GPU request"}},
		{"topology around reservations", plan.LayerPlacement, plan.ReasonQuotaFitsClusterDoesNot,
			&plan.Evidence{Place: &plan.PlaceFailure{Code: plan.ReasonTopologyUnsatisfied, Holds: 2}},
			[]string{"placement: TopologyUnsatisfied", "the gang does not fit around the GPUs 2 reservation(s) ahead of it hold"}},
		{"not enough free GPU", plan.LayerPlacement, plan.ReasonQuotaFitsClusterDoesNot,
			&plan.Evidence{Place: &plan.PlaceFailure{Code: plan.ReasonNotEnoughFreeGPU, NeedGPU: 16000, FreeGPU: 3500}},
			[]string{"placement: NotEnoughFreeGPU", "the gang needs 16000 milli-GPU at once; the whole cluster has 3500 free"}},
		{"no room for the gang's pods", plan.LayerPlacement, plan.ReasonQuotaFitsClusterDoesNot,
			&plan.Evidence{Place: &plan.PlaceFailure{Code: plan.ReasonNoRoomForGang, Room: &plan.GangRoom{Pods: 4, GPUs: 8, Hostable: 1}}},
			[]string{"placement: NoRoomForGang", "the gang needs 4 pod(s) of 8 whole GPU(s) at once; the free GPUs, node by node, could host 1"}},
		{"nodes do not fit without the quota victims", plan.LayerPlacement, plan.ReasonQuotaFitsClusterDoesNot,
			&plan.Evidence{Without: []api.WorkloadID{"ns/a", "ns/b"}, Place: gangFails},
			[]string{"quota fits after preempting ns/a,ns/b, the nodes do not: GangDoesNotFit", diagLine}},
		{"quota victim not bound", plan.LayerPlacement, plan.ReasonQuotaFitsClusterDoesNot,
			&plan.Evidence{Without: []api.WorkloadID{"ns/a"}, Place: &plan.PlaceFailure{Code: plan.ReasonVictimNotBound, Message: "pod ns/a/main/0 is not bound"}},
			[]string{"quota fits after preempting ns/a, the nodes do not: VictimNotBound", "pod ns/a/main/0 is not bound"}},
		{"reserved GPUs", plan.LayerPlacement, plan.ReasonBlockedByReservation,
			&plan.Evidence{Place: &plan.PlaceFailure{Code: plan.ReasonBlockedByReservation, Message: "pod w-main-0 would hold GPU-0 on node n0"}},
			[]string{"pod w-main-0 would hold GPU-0 on node n0"}},
		{"reserved node, flavors tried", plan.LayerPlacement, plan.ReasonBlockedByReservation,
			&plan.Evidence{Place: &plan.PlaceFailure{Code: plan.ReasonBlockedByReservation,
				Reserved: &plan.ReservedNode{Node: "n0", In: 90 * time.Minute}}, Fallbacks: fallbacks[1:]},
			[]string{"node n0 is reserved from 1h30m0s and this workload's runtime (unknown) does not end before", fallbackLines[1]}},
		{"reserved node, known runtime", plan.LayerPlacement, plan.ReasonBlockedByReservation,
			&plan.Evidence{Place: &plan.PlaceFailure{Code: plan.ReasonBlockedByReservation,
				Reserved: &plan.ReservedNode{Node: "n0", In: time.Hour, Runtime: 2 * time.Hour}}},
			[]string{"node n0 is reserved from 1h0m0s and this workload's runtime (2h0m0s) does not end before"}},
		{"admit failed", plan.LayerAdmission, plan.ReasonAdmitFailed,
			&plan.Evidence{Place: &plan.PlaceFailure{Code: plan.ReasonAdmitFailed, Message: "quota changed"}}, []string{"quota changed"}},
		{"backoff after a failure", plan.LayerAdmission, plan.ReasonBackoffAfterFailure,
			&plan.Evidence{Backoff: &plan.Backoff{Failures: 2, EvictedAt: evictedAt, RetryAt: evictedAt.Add(2 * time.Minute)}},
			[]string{"evicted by failure 2 at 2026-01-01T10:00:00Z; retried from 2026-01-01T10:02:00Z"}},
		{"requeue limit", plan.LayerAdmission, plan.ReasonRequeuingLimitExceeded,
			&plan.Evidence{Backoff: &plan.Backoff{Failures: 3, EvictedAt: evictedAt, Limit: 2}},
			[]string{"evicted by 3 failures, more than the requeue limit 2; not tried again until the workload changes"}},
		{"never fits (the simulator's mark, its finding as the message)", plan.LayerPlacement, plan.ReasonNeverFits,
			&plan.Evidence{Message: "no node of the cluster can hold one pod (0 of 2 nodes)"},
			[]string{"no node of the cluster can hold one pod (0 of 2 nodes)"}},
	}
	covered := map[plan.Reason]bool{}
	for _, tc := range cases {
		r := plan.Rejection{Workload: "ns/w", ClusterQueue: "cq", Layer: tc.layer, Reason: tc.why, Evidence: tc.ev}
		got := r.Explain()
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: Explain() =\n  %s\nwant\n  %s", tc.name, strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
		}
		if head := r.Headline(); (len(got) == 0 && head != "") || (len(got) > 0 && head != got[0]) {
			t.Errorf("%s: Headline() = %q, not Explain's first line", tc.name, head)
		}
		if !slices.Contains(tc.why.Layers(), tc.layer) {
			t.Errorf("%s: layer %s is not one of %s's %v", tc.name, tc.layer, tc.why, tc.why.Layers())
		}
		if len(got) == 0 {
			continue
		}
		covered[tc.why] = true
		if tc.ev == nil {
			continue
		}
		if f := tc.ev.Place; f != nil {
			covered[f.Code] = true
		}
		for _, fb := range tc.ev.Fallbacks {
			if fb.Place != nil {
				covered[fb.Place.Code] = true
			}
		}
	}
	for _, r := range plan.Reasons() {
		if !covered[r] {
			t.Errorf("reason %s: no case renders it (add one above)", r)
		}
	}
}

// TestReasons: every code has a layer, and admission's and placement's codes are Reasons
// with the same text.
func TestReasons(t *testing.T) {
	for _, r := range plan.Reasons() {
		if len(r.Layers()) == 0 {
			t.Errorf("reason %s has no layer", r)
		}
	}
	for _, c := range []admission.ReasonCode{admission.QueueMissing, admission.ClusterQueueMissing, admission.NamespaceNotSelected,
		admission.QueueHeld, admission.InvalidWorkload, admission.ResourceNotCovered, admission.NoFlavorMatches,
		admission.ExceedsMaxQuota, admission.WaitingForQuota, admission.WaitingForPreemption, admission.BlockedByHead,
		admission.Inadmissible, admission.AdmitFailed} {
		if r := plan.AdmissionReason(c); !r.Known() || string(r) != string(c) {
			t.Errorf("AdmissionReason(%s) = %q (known %v), want the same code as a Reason", c, r, r.Known())
		}
	}
	for _, c := range []placement.FailureCode{placement.NoNodeFits, placement.GangDoesNotFit, placement.TopologyUnsatisfied,
		placement.InvalidWorkload, placement.VictimNotBound} {
		if r := plan.PlacementReason(c); !r.Known() || string(r) != string(c) {
			t.Errorf("PlacementReason(%s) = %q (known %v), want the same code as a Reason", c, r, r.Known())
		}
	}
	if plan.Reason("Reserved").Known() || plan.Reason("").Known() {
		t.Error("Known() is true for a code that is not a constant")
	}
}

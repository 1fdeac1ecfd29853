package plan_test

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// short is admission's WhyShort for need GPUs of flavor with free of nominal unused and
// lendable in the cohort.
func short(flavor string, need, free, nominal, lend resources.Amount) admission.Why {
	return admission.Why{Kind: admission.WhyShort, Resource: resources.NvidiaGPU, Flavor: flavor, Amount: need,
		Free: free, Nominal: nominal, Lendable: lend, NoBorrow: admission.CohortShort, Cohort: "global"}
}

func fits(flavor string, r resources.Name, need resources.Amount) admission.Why {
	return admission.Why{Kind: admission.WhyFits, Resource: r, Flavor: flavor, Amount: need, Free: need, Nominal: need}
}

// TestRemedy: each reason with evidence names the cheapest change, and the reasons
// only time resolves name none.
func TestRemedy(t *testing.T) {
	worker := func(tried ...admission.FlavorAttempt) *admission.Assignment {
		return &admission.Assignment{Mode: admission.Preempt, Code: admission.WaitingForQuota, PodSets: []admission.PodSetAssignment{
			{Name: "master", Mode: admission.Fit, Tried: []admission.FlavorAttempt{{Flavor: "h100", Mode: admission.Fit,
				Reasons: []admission.Why{fits("h100", resources.NvidiaGPU, 8)}}}},
			{Name: "worker", Mode: admission.Preempt, Code: admission.WaitingForQuota, Tried: tried}}}
	}
	h100Short := admission.FlavorAttempt{Flavor: "h100", Mode: admission.Preempt, Code: admission.WaitingForQuota,
		Reasons: []admission.Why{fits("h100", resources.CPU, 96000), short("h100", 24, 16, 24, 2), {Kind: admission.WhyNoPreemption}}}
	a100Short := admission.FlavorAttempt{Flavor: "a100", Mode: admission.Preempt, Code: admission.WaitingForQuota,
		Reasons: []admission.Why{short("a100", 24, 0, 8, 0), {Kind: admission.WhyShort, Resource: resources.CPU, Flavor: "a100",
			Amount: 96000, Free: 0, Nominal: 64000}}}
	spotTaint := admission.FlavorAttempt{Flavor: "spot", Mode: admission.NoFit, Code: admission.NoFlavorMatches,
		Reasons: []admission.Why{{Kind: admission.WhyText, Text: "taint spot=true:NoSchedule not tolerated"}}}
	exceeds := admission.FlavorAttempt{Flavor: "h100", Mode: admission.NoFit, Code: admission.ExceedsMaxQuota,
		Reasons: []admission.Why{{Kind: admission.WhyExceedsMax, Resource: resources.NvidiaGPU, Flavor: "h100", Amount: 40,
			Nominal: 24, Limit: 32, ClusterQueue: "research"}}}
	near := &placement.Diagnosis{Workload: "ns/w", PodSet: "main", Pod: 0, TotalNodes: 12,
		NearMiss: &placement.NearMiss{Node: "a100-mig-0", Rejections: []placement.Rejection{
			{Reason: placement.ReasonTaint, Subject: "spot=true:NoSchedule", Detail: "not tolerated"}}}}

	cases := []struct {
		name string
		r    plan.Rejection
		want string
	}{
		{"short quota: the shortfall beyond free and lendable, on the flavor needing one change",
			plan.Rejection{ClusterQueue: "research", Reason: plan.ReasonWaitingForQuota,
				Evidence: &plan.Evidence{Quota: worker(a100Short, h100Short)}},
			"6 more nvidia.com/gpu in flavor h100: raise ClusterQueue research's nominalQuota (24) by 6, let its cohort lend that much, or wait for running workloads to free it"},
		{"not in a cohort",
			plan.Rejection{ClusterQueue: "train", Reason: plan.ReasonWaitingForQuota, Evidence: &plan.Evidence{Quota: worker(admission.FlavorAttempt{
				Flavor: "h100", Mode: admission.NoFit, Code: admission.WaitingForQuota, Reasons: []admission.Why{{Kind: admission.WhyShort,
					Resource: resources.NvidiaGPU, Flavor: "h100", Amount: 8, Nominal: 8, NoBorrow: admission.NotInCohort}, {Kind: admission.WhyNoPreemption}}})}},
			"8 more nvidia.com/gpu in flavor h100: raise ClusterQueue train's nominalQuota (8) by 8, put it in a cohort that lends that much, or wait for running workloads to free it"},
		{"borrowing limit reached",
			plan.Rejection{ClusterQueue: "train", Reason: plan.ReasonWaitingForQuota, Evidence: &plan.Evidence{Quota: worker(admission.FlavorAttempt{
				Flavor: "h100", Mode: admission.Preempt, Code: admission.WaitingForQuota, Reasons: []admission.Why{{Kind: admission.WhyShort,
					Resource: resources.NvidiaGPU, Flavor: "h100", Amount: 8, Free: 2, Nominal: 8, NoBorrow: admission.BorrowLimitReached, BorrowLimit: 4}}})}},
			"6 more nvidia.com/gpu in flavor h100: raise ClusterQueue train's nominalQuota (8) by 6, raise its borrowingLimit (4) by that much, or wait for running workloads to free it"},
		{"a flavor refused for taints offers no quota remedy; the next one does",
			plan.Rejection{ClusterQueue: "research", Reason: plan.ReasonWaitingForQuota,
				Evidence: &plan.Evidence{Quota: worker(spotTaint, h100Short)}},
			"6 more nvidia.com/gpu in flavor h100: raise ClusterQueue research's nominalQuota (24) by 6, let its cohort lend that much, or wait for running workloads to free it"},
		{"only non-quota refusals: no remedy",
			plan.Rejection{ClusterQueue: "research", Reason: plan.ReasonNoFlavorMatches,
				Evidence: &plan.Evidence{Quota: worker(spotTaint)}},
			""},
		{"more than the queue can ever use",
			plan.Rejection{ClusterQueue: "research", Reason: plan.ReasonExceedsMaxQuota,
				Evidence: &plan.Evidence{Quota: worker(exceeds)}},
			"raise ClusterQueue research's nvidia.com/gpu in flavor h100 by 8: nominalQuota 24, at most 32 with borrowing, and one request needs 40"},
		{"no quota entry",
			plan.Rejection{ClusterQueue: "batch", Reason: plan.ReasonWaitingForQuota,
				Evidence: &plan.Evidence{Quota: worker(admission.FlavorAttempt{Flavor: "mig", Mode: admission.NoFit,
					Reasons: []admission.Why{{Kind: admission.WhyNoQuota, Resource: "nvidia.com/mig-1g.10gb", Flavor: "mig", Amount: 2}}})}},
			"add nvidia.com/mig-1g.10gb to flavor mig of ClusterQueue batch (at least 2)"},
		{"quota fits, the nodes do not: what the closest node lacks",
			plan.Rejection{ClusterQueue: "batch", Reason: plan.ReasonQuotaFitsClusterDoesNot,
				Evidence: &plan.Evidence{Quota: &admission.Assignment{Mode: admission.Fit},
					Place: &plan.PlaceFailure{Code: plan.ReasonNoNodeFits, Diagnosis: near}}},
			"node a100-mig-0, the closest, would take pod set main pod 0 without: Taint spot=true:NoSchedule: not tolerated"},
		{"the nodes do not fit the first flavor, quota blocks the next: both ways in",
			plan.Rejection{ClusterQueue: "batch", Reason: plan.ReasonQuotaFitsClusterDoesNot,
				Evidence: &plan.Evidence{Quota: &admission.Assignment{Mode: admission.Fit},
					Place:     &plan.PlaceFailure{Code: plan.ReasonNoNodeFits, Diagnosis: near},
					Fallbacks: []plan.Fallback{{Without: []string{"spot"}, Quota: worker(h100Short)}}}},
			"node a100-mig-0, the closest, would take pod set main pod 0 without: Taint spot=true:NoSchedule: not tolerated; " +
				"or without flavor spot: 6 more nvidia.com/gpu in flavor h100: raise ClusterQueue batch's nominalQuota (24) by 6, let its cohort lend that much, or wait for running workloads to free it"},
		{"topology",
			plan.Rejection{Reason: plan.ReasonQuotaFitsClusterDoesNot, Evidence: &plan.Evidence{Place: &plan.PlaceFailure{
				Code: plan.ReasonTopologyUnsatisfied, Diagnosis: &placement.Diagnosis{Topology: "no rack domain has room for 4 pods (best r7: 3)"}}}},
			"a topology domain with room for the whole gang: no rack domain has room for 4 pods (best r7: 3)"},
		{"not enough free GPU, rounded up to whole GPUs",
			plan.Rejection{Reason: plan.ReasonQuotaFitsClusterDoesNot, Evidence: &plan.Evidence{Place: &plan.PlaceFailure{
				Code: plan.ReasonNotEnoughFreeGPU, NeedGPU: 16000, FreeGPU: 12500}}},
			"4 more GPU(s) free at once: wait for running workloads to end, or add GPU nodes"},
		{"no room for the gang",
			plan.Rejection{Reason: plan.ReasonQuotaFitsClusterDoesNot, Evidence: &plan.Evidence{Place: &plan.PlaceFailure{
				Code: plan.ReasonNoRoomForGang, Room: &plan.GangRoom{Pods: 4, GPUs: 8, Hostable: 1}}}},
			"room for 3 more pod(s) of 8 whole GPU(s) on single nodes: 1 of 4 fit in the free GPUs now"},
		{"held queue", plan.Rejection{ClusterQueue: "prod", Reason: plan.ReasonQueueHeld},
			"set spec.stopPolicy: None on the queue that holds it (ClusterQueue prod or its LocalQueue)"},
		{"missing LocalQueue", plan.Rejection{Reason: plan.ReasonQueueMissing,
			Evidence: &plan.Evidence{Unresolved: &plan.LocalQueueRef{Namespace: "team-a", Name: "lq"}}},
			"create LocalQueue lq in namespace team-a, pointing at a ClusterQueue"},
		{"waiting for victims: time, not a change", plan.Rejection{Reason: plan.ReasonWaitingForPreemption,
			Evidence: &plan.Evidence{Quota: &admission.Assignment{Mode: admission.Fit}}}, ""},
		{"backoff: time, not a change", plan.Rejection{Reason: plan.ReasonBackoffAfterFailure,
			Evidence: &plan.Evidence{Backoff: &plan.Backoff{Failures: 1}}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.r.Remedy(); got != c.want {
				t.Errorf("Remedy()\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

package admission

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
)

// The cases of Kueue's TestSchedule and TestScheduleForFairSharing about
// flavorFungibility.preference (kubernetes-sigs/kueue pkg/scheduler/scheduler_test.go,
// scheduler_fs_test.go).

// preferring is cq with both fungibility policies TryNextFlavor and preference p
// (Kueue allows a preference only then).
func preferring(cq *gt.ClusterQueueWrapper, p api.FungibilityPreference) api.ClusterQueue {
	out := cq.Fungibility(api.TryNextFlavor, api.TryNextFlavor).Obj()
	out.FlavorFungibility.Preference = p
	return out
}

// preferenceCQs are Kueue's "<prefix>-cq" (on-demand 5 with borrowing limit 0, spot 0
// with borrowing limit 5, preempting LowerPriority in the queue) and "<prefix>-lender"
// (spot 5) of cohort "<prefix>-cohort".
func preferenceCQs(prefix string, p api.FungibilityPreference) []api.ClusterQueue {
	return []api.ClusterQueue{
		preferring(gt.MakeClusterQueue(prefix+"-cq").Cohort(prefix+"-cohort").Preemption(api.PreemptLowerPriority, api.PreemptNever).
			ResourceGroup(gt.MakeFlavorQuotas("on-demand").Resource(cpu, "5").Borrow("0").Obj(),
				gt.MakeFlavorQuotas("spot").Resource(cpu, "0").Borrow("5").Obj()), p),
		gt.MakeClusterQueue(prefix+"-lender").Cohort(prefix+"-cohort").ResourceGroup(
			gt.MakeFlavorQuotas("on-demand").Resource(cpu, "0").Obj(),
			gt.MakeFlavorQuotas("spot").Resource(cpu, "5").Obj()).Obj(),
	}
}

// kueuePreferenceCases are TestSchedule's three preference cases.
func kueuePreferenceCases() []kueueScheduleCase {
	return []kueueScheduleCase{
		{
			name:          "PreemptionOverBorrowing preference: preempt in first flavor instead of borrowing in second",
			cqs:           preferenceCQs("pob", api.PreemptionOverBorrowing),
			admitted:      []kueueAdmitted{adm("low-pob", "pob-cq", -1, use("on-demand", cpu, "5"))},
			pending:       []kueuePending{{gt.MakeWorkload("default", "high-pob").Request(cpu, "5"), "pob-cq"}},
			wantPreempted: map[string]VictimReason{"low-pob": InClusterQueue},
			wantLeft:      []string{"high-pob"},
		},
		{
			// on-demand is exhausted at the same priority (no candidates) but could come
			// from the idle sibling one level up; spot fits from the root: the flavor
			// without candidates never wins, whatever its borrowing level.
			name: "PreemptionOverBorrowing preference: select fitting second flavor over first flavor with no preemption candidates",
			cohorts: []api.Cohort{
				gt.MakeCohort("nopc-root").ResourceGroup(gt.MakeFlavorQuotas("on-demand").Resource(cpu, "0").Obj(),
					gt.MakeFlavorQuotas("spot").Resource(cpu, "5").Obj()).Obj(),
				gt.MakeCohort("nopc-mid").Parent("nopc-root").Obj(),
			},
			cqs: []api.ClusterQueue{
				preferring(gt.MakeClusterQueue("nopc-cq").Cohort("nopc-mid").Preemption(api.PreemptLowerPriority, api.PreemptNever).
					ResourceGroup(gt.MakeFlavorQuotas("on-demand").Resource(cpu, "5").Borrow("0").Obj(),
						gt.MakeFlavorQuotas("spot").Resource(cpu, "0").Obj()), api.PreemptionOverBorrowing),
				gt.MakeClusterQueue("nopc-sibling").Cohort("nopc-mid").ResourceGroup(
					gt.MakeFlavorQuotas("on-demand").Resource(cpu, "5").Obj(),
					gt.MakeFlavorQuotas("spot").Resource(cpu, "0").Obj()).Obj(),
			},
			admitted:     []kueueAdmitted{adm("admitted-nopc", "nopc-cq", 0, use("on-demand", cpu, "5"))},
			pending:      []kueuePending{{gt.MakeWorkload("default", "pending-nopc").Request(cpu, "5"), "nopc-cq"}},
			wantAdmitted: map[string]string{"pending-nopc": "main:cpu@spot"},
		},
		{
			name:         "BorrowingOverPreemption preference: borrow in second flavor instead of preempting in first",
			cqs:          preferenceCQs("bop", api.BorrowingOverPreemption),
			admitted:     []kueueAdmitted{adm("low-bop", "bop-cq", -1, use("on-demand", cpu, "5"))},
			pending:      []kueuePending{{gt.MakeWorkload("default", "high-bop").Request(cpu, "5"), "bop-cq"}},
			wantAdmitted: map[string]string{"high-bop": "main:cpu@spot"},
		},
	}
}

// kueueFairPreferenceCases are TestScheduleForFairSharing's preference case.
func kueueFairPreferenceCases() []kueueScheduleCase {
	fair := Options{FairSharing: FairSharingConfig{Enabled: true}}
	return []kueueScheduleCase{
		{
			name:          "PreemptionOverBorrowing with fair sharing: preempt in first flavor instead of borrowing in second",
			cqs:           preferenceCQs("fs-pob", api.PreemptionOverBorrowing),
			admitted:      []kueueAdmitted{adm("fs-low-pob", "fs-pob-cq", -1, use("on-demand", cpu, "5"))},
			pending:       []kueuePending{{gt.MakeWorkload("default", "fs-high-pob").Request(cpu, "5"), "fs-pob-cq"}},
			wantPreempted: map[string]VictimReason{"fs-low-pob": InClusterQueue},
			wantLeft:      []string{"fs-high-pob"},
			opts:          fair,
		},
	}
}

// TestKueueScheduleFairSharingCases replays the cases of Kueue's
// TestScheduleForFairSharing that one cycle over the quota layer decides.
func TestKueueScheduleFairSharingCases(t *testing.T) {
	runKueueScheduleCases(t, kueueFairPreferenceCases())
}

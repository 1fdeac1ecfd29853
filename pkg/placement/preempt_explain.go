package placement

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
)

// BudgetsOf collects the disruption budgets of ClusterQueues, keyed by queue name, for
// PreemptionRequest.Budgets; queues without a budget (MaxGPUs 0) are left out.
func BudgetsOf(cqs []api.ClusterQueue) map[string]api.DisruptionBudget {
	out := map[string]api.DisruptionBudget{}
	for _, cq := range cqs {
		if cq.DisruptionBudget.MaxGPUs > 0 {
			out[cq.Name] = cq.DisruptionBudget
		}
	}
	return out
}

// Records turns the victims into history entries at time at, for the next request's
// PreemptionRequest.History (the engine appends them once the notices are issued).
func (r PreemptionResult) Records(at time.Time) []PreemptionRecord {
	out := make([]PreemptionRecord, 0, len(r.Victims))
	for _, v := range r.Victims {
		out = append(out, PreemptionRecord{Workload: v.Workload, Queue: v.Queue, At: at, GPUMilli: v.GPUMilli})
	}
	return out
}

// Summary explains the result in one line, e.g. "preempt 1 gang (ns/a: 8000 milli-GPU,
// 2400000 milli-GPU-s lost) to place ns/big; not chosen: 2 NotNeeded, 1 Priority".
func (r PreemptionResult) Summary() string {
	var b strings.Builder
	switch r.Outcome {
	case PreemptFound:
		parts := make([]string, 0, len(r.Victims))
		for _, v := range r.Victims {
			parts = append(parts, fmt.Sprintf("%s: %d milli-GPU, %d milli-GPU-s lost", v.Workload, v.GPUMilli, v.LostWork))
		}
		fmt.Fprintf(&b, "preempt %d gang(s) (%s) to place %s", len(r.Victims), strings.Join(parts, "; "), r.Preemptor)
	case PreemptNotNeeded:
		fmt.Fprintf(&b, "%s fits without preemption", r.Preemptor)
	case PreemptNoCandidates:
		fmt.Fprintf(&b, "no running gang may be preempted for %s", r.Preemptor)
	case PreemptStillNoFit:
		fmt.Fprintf(&b, "%s would not fit even after preempting every eligible gang", r.Preemptor)
	case PreemptPolicyNever:
		fmt.Fprintf(&b, "the preemption policy of %s is Never", r.Preemptor)
	default:
		fmt.Fprintf(&b, "%s: %s", r.Preemptor, r.Outcome)
	}
	if counts := skipCounts(r.Skipped); counts != "" {
		b.WriteString("; not chosen: " + counts)
	}
	return b.String()
}

// skipCounts renders "2 NotNeeded, 1 Priority", most frequent first, then by code.
func skipCounts(ss []Skipped) string {
	n := map[SkipCode]int{}
	for _, s := range ss {
		n[s.Code]++
	}
	codes := make([]SkipCode, 0, len(n))
	for c := range n {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(i, j int) bool {
		if n[codes[i]] != n[codes[j]] {
			return n[codes[i]] > n[codes[j]]
		}
		return codes[i] < codes[j]
	})
	parts := make([]string, 0, len(codes))
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d %s", n[c], c))
	}
	return strings.Join(parts, ", ")
}

// ETA returns the reserved start time, and false when there is no reservation.
func (r ReservationResult) ETA() (time.Time, bool) {
	if r.Reservation == nil {
		return time.Time{}, false
	}
	return r.Reservation.Start, true
}

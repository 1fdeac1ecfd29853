package placement

import (
	"fmt"
	"sort"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// LostWork is the GPU work a running workload loses if stopped at now: the time since
// its last checkpoint (or its start, if it never checkpointed) times the GPU it holds.
// Whole seconds only, so the value is an exact integer; a clock skew (now before the
// start) counts as no lost work.
func LostWork(r Running, now time.Time) MilliGPUSeconds {
	since := r.StartedAt
	if r.LastCheckpoint.After(since) {
		since = r.LastCheckpoint
	}
	secs := int64(now.Sub(since) / time.Second)
	if secs <= 0 || r.GPUMilli <= 0 {
		return 0
	}
	return MilliGPUSeconds(resources.SatMul(resources.Amount(r.GPUMilli), secs))
}

// priorityAllows says whether policy lets the preemptor evict r, and why not. The rule is
// api.PreemptionPolicy.Allows; only the empty policy reads differently here, as
// defaultPolicy (see PreemptionRequest.Policy).
func priorityAllows(policy api.PreemptionPolicy, p Preemptor, r Running) (bool, string) {
	if policy == "" {
		policy = defaultPolicy
	}
	if policy.Allows(p.priorityAge(), r.priorityAge()) {
		return true, ""
	}
	switch policy {
	case api.PreemptLowerOrNewerEqualPriority:
		return false, fmt.Sprintf("priority %d is not lower than %d, and it is not newer", r.Priority, p.Priority)
	case api.PreemptLowerPriority:
		return false, fmt.Sprintf("priority %d is not lower than the preemptor's %d", r.Priority, p.Priority)
	}
	return false, fmt.Sprintf("the preemption policy %q allows no victim", policy)
}

// minRuntimeProtects says whether r is too young to preempt.
func minRuntimeProtects(r Running, now time.Time) (bool, string) {
	if r.MinRuntime <= 0 {
		return false, ""
	}
	ran := now.Sub(r.StartedAt)
	if ran >= r.MinRuntime {
		return false, ""
	}
	return true, fmt.Sprintf("ran %s of its minimum runtime %s", ran.Truncate(time.Second), r.MinRuntime)
}

// eligible splits the running workloads into preemption candidates and skipped ones
// (policy, priority, minimum runtime). Budgets are applied later, in order.
func eligible(req PreemptionRequest) (cands []Running, skipped []Skipped) {
	for _, r := range req.Running {
		switch {
		case r.ID == req.Preemptor.ID:
			skipped = append(skipped, Skipped{r.ID, SkipSelf, "the preemptor itself"})
		case !r.Preemptible:
			skipped = append(skipped, Skipped{r.ID, SkipNotPreemptible, "marked not preemptible"})
		default:
			if ok, why := priorityAllows(req.Policy, req.Preemptor, r); !ok {
				skipped = append(skipped, Skipped{r.ID, SkipPriority, why})
				continue
			}
			if young, why := minRuntimeProtects(r, req.Now); young {
				skipped = append(skipped, Skipped{r.ID, SkipMinRuntime, why})
				continue
			}
			cands = append(cands, r)
		}
	}
	return cands, skipped
}

// candidateKey is the sort key of a candidate, computed once.
type candidateKey struct {
	priority int32
	onDemand int // 0 for spot: spot gangs go first
	lost     MilliGPUSeconds
	gpu      resources.MilliGPU
	id       api.WorkloadID
}

func keyOf(r Running, now time.Time) candidateKey {
	k := candidateKey{priority: r.Priority, lost: LostWork(r, now), gpu: r.GPUMilli, id: r.ID}
	if r.CapacityType != api.CapacitySpot {
		k.onDemand = 1
	}
	return k
}

// less orders candidates: lowest priority, spot before on-demand, least lost work, then
// more GPU freed (so fewer victims are needed), then ID for determinism.
func (a candidateKey) less(b candidateKey) bool {
	if a.priority != b.priority {
		return a.priority < b.priority
	}
	if a.onDemand != b.onDemand {
		return a.onDemand < b.onDemand
	}
	if a.lost != b.lost {
		return a.lost < b.lost
	}
	if a.gpu != b.gpu {
		return a.gpu > b.gpu
	}
	return a.id < b.id
}

// orderCandidates sorts candidates in preemption order (see candidateKey.less).
func orderCandidates(cands []Running, now time.Time) {
	keys := make(map[api.WorkloadID]candidateKey, len(cands))
	for _, c := range cands {
		keys[c.ID] = keyOf(c, now)
	}
	sort.SliceStable(cands, func(i, j int) bool { return keys[cands[i].ID].less(keys[cands[j].ID]) })
}

// budgetLedger tracks, per queue, GPU preempted inside the budget window, so a choice
// that would exceed a queue's budget is refused.
type budgetLedger struct {
	budgets map[string]api.DisruptionBudget
	used    map[string]resources.MilliGPU
}

func newBudgetLedger(req PreemptionRequest) *budgetLedger {
	l := &budgetLedger{budgets: req.Budgets, used: map[string]resources.MilliGPU{}}
	for _, h := range req.History {
		b, ok := req.Budgets[h.Queue]
		if !ok || b.MaxGPUs <= 0 {
			continue
		}
		// A record counts while it is inside the window ending now. A zero window
		// means the whole history counts.
		if b.Window > 0 && !h.At.After(req.Now.Add(-b.Window)) {
			continue
		}
		if h.At.After(req.Now) {
			continue
		}
		l.used[h.Queue] += h.GPUMilli
	}
	return l
}

// take charges r's GPU to its queue's budget, or says why it cannot.
func (l *budgetLedger) take(r Running) (bool, string) {
	b, ok := l.budgets[r.Queue]
	if !ok || b.MaxGPUs <= 0 {
		return true, ""
	}
	limit := resources.MilliGPU(b.MaxGPUs) * resources.MilliPerGPU
	if l.used[r.Queue]+r.GPUMilli > limit {
		return false, fmt.Sprintf("queue %q has preempted %d of its %d milli-GPU budget per %s; this gang holds %d",
			r.Queue, l.used[r.Queue], limit, b.Window, r.GPUMilli)
	}
	l.used[r.Queue] += r.GPUMilli
	return true, ""
}

// give returns r's GPU to its queue's budget.
func (l *budgetLedger) give(r Running) {
	if b, ok := l.budgets[r.Queue]; ok && b.MaxGPUs > 0 {
		l.used[r.Queue] -= r.GPUMilli
	}
}

// allows reports whether preempting all of set stays within every budget; the ledger
// is unchanged.
func (l *budgetLedger) allows(set []Running) bool {
	for i, r := range set {
		if ok, _ := l.take(r); !ok {
			for _, back := range set[:i] {
				l.give(back)
			}
			return false
		}
	}
	for _, r := range set {
		l.give(r)
	}
	return true
}

// filter keeps, in order, the candidates the budgets can afford when every earlier
// kept one is preempted too, and explains the others. It charges the ledger.
func (l *budgetLedger) filter(cands []Running) (kept []Running, over []Skipped) {
	for _, c := range cands {
		if ok, why := l.take(c); !ok {
			over = append(over, Skipped{c.ID, SkipBudget, why})
			continue
		}
		kept = append(kept, c)
	}
	return kept, over
}

package placement

import (
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
)

// GangFit places a workload's whole gang on ov and returns its placement, or reports
// that it does not fit, leaving no trace then. The engine passes a closure over
// PlaceWorkload with the workload's flavor assignment and scoring; preemption and
// reservations only ask "does it fit now?" and roll back whatever it assumed.
type GangFit func(ov *cluster.Overlay) (*Placement, bool)

// overlayProbe is the whatIf of a real overlay.
type overlayProbe struct {
	ov   *cluster.Overlay
	fit  GangFit
	last *Placement // placement of the latest successful fits()
	// lastPods are the pods that placement assumed in the latest successful fits().
	lastPods []cluster.BoundPod
	// nodes remembers the nodes of each released workload's pods.
	nodes map[api.WorkloadID][]string
}

var _ whatIf = (*overlayProbe)(nil)

func (p *overlayProbe) mark() int  { return int(p.ov.Mark()) }
func (p *overlayProbe) undo(m int) { p.ov.Undo(cluster.Mark(m)) }

func (p *overlayProbe) check(r *Running) error {
	if len(r.Pods) == 0 {
		return fmt.Errorf("running workload %s: pods: has no bound pods to free", r.ID)
	}
	nodes := make([]string, 0, len(r.Pods))
	for _, ref := range r.Pods {
		bp, ok := p.ov.Pod(ref)
		if !ok {
			return fmt.Errorf("running workload %s: pod %s: not bound", r.ID, ref)
		}
		nodes = append(nodes, bp.Node)
	}
	if p.nodes == nil {
		p.nodes = map[api.WorkloadID][]string{}
	}
	p.nodes[r.ID] = nodes
	return nil
}

func (p *overlayProbe) release(r *Running) error {
	if len(r.Pods) == 0 {
		return fmt.Errorf("running workload %s: pods: has no bound pods to free", r.ID)
	}
	for _, ref := range r.Pods {
		if err := p.ov.Forget(ref); err != nil {
			return fmt.Errorf("running workload %s: %w", r.ID, err)
		}
	}
	return nil
}

func (p *overlayProbe) touches(r *Running) bool {
	for _, n := range p.nodes[r.ID] {
		for _, bp := range p.lastPods {
			if bp.Node == n {
				return true
			}
		}
	}
	return false
}

func (p *overlayProbe) fits() bool {
	m := p.ov.Mark()
	pl, ok := p.fit(p.ov)
	if ok {
		p.last, p.lastPods = pl, AssumedSince(p.ov, m)
	}
	p.ov.Undo(m)
	return ok
}

// AssumedSince lists the pods assumed on ov after mark m and still there: what a
// placement added. The engine uses it to check a backfilled placement against
// reservations (ReservationSet.Allows) before keeping it.
func AssumedSince(ov *cluster.Overlay, m cluster.Mark) []cluster.BoundPod {
	var out []cluster.BoundPod
	for _, c := range ov.ChangesSince(m) {
		if c.Op != cluster.OpBind {
			continue
		}
		if _, still := ov.Pod(c.Pod.Ref); still {
			out = append(out, c.Pod)
		}
	}
	return out
}

// SelectVictims plans placement-time preemption for a gang that quota admits but the
// nodes cannot hold: it picks whole running gangs to preempt, in preemption order
// (lowest priority, spot first, least lost work, most GPU freed), only as many as make
// the gang fit on ov, within each queue's disruption budget and never before a
// victim's minimum runtime. The overlay is left exactly as it was: the result is a plan
// (victims, notices with a grace period, the placement they enable), not an action.
//
// Bad input (nil overlay or fit, duplicate running IDs, negative durations) is an
// error; a gang that cannot be helped is a result with Outcome and reasons.
func SelectVictims(ov *cluster.Overlay, fit GangFit, req PreemptionRequest) (PreemptionResult, error) {
	if err := validatePreemption(ov, fit, req); err != nil {
		return PreemptionResult{}, err
	}
	res := PreemptionResult{Preemptor: req.Preemptor.ID}
	probe := &overlayProbe{ov: ov, fit: fit}
	s := chooseVictims(probe, req)
	res.Outcome, res.Skipped = s.outcome, s.skipped
	switch s.outcome {
	case PreemptNotNeeded:
		probe.fits()
		res.Placement, res.Pods = probe.last, probe.lastPods
	case PreemptFound:
		if !confirm(probe, s.chosen) {
			// Only a non-deterministic GangFit gets here; refuse rather than evict for nothing.
			res.Outcome = PreemptStillNoFit
			res.Skipped = append(res.Skipped, skipAll(s.chosen, SkipNoHelp, "the gang did not fit on re-check")...)
			return res, nil
		}
		res.Placement, res.Pods = probe.last, probe.lastPods
		res.Victims, res.Notices = victimsOf(ov, s.chosen, req)
		for _, v := range res.Victims {
			res.FreedGPUMilli += v.GPUMilli
			res.LostWork += v.LostWork
		}
	}
	return res, nil
}

// confirm frees the chosen victims once more and captures the gang's placement.
func confirm(p *overlayProbe, chosen []Running) bool {
	base := p.mark()
	defer p.undo(base)
	p.last = nil
	return fitsWithout(p, base, chosen)
}

// victimsOf turns chosen gangs into victims and notices.
func victimsOf(ov *cluster.Overlay, chosen []Running, req PreemptionRequest) ([]Victim, []Notice) {
	victims := make([]Victim, 0, len(chosen))
	notices := make([]Notice, 0, len(chosen))
	for _, c := range chosen {
		victims = append(victims, Victim{
			Workload: c.ID, Queue: c.Queue, Priority: c.Priority, GPUMilli: c.GPUMilli,
			LostWork: LostWork(c, req.Now), Nodes: nodesOf(ov, c.Pods),
		})
		grace := req.GracePeriod
		if c.GracePeriod > 0 {
			grace = c.GracePeriod
		}
		notices = append(notices, Notice{
			Workload: c.ID, NoticeAt: req.Now, EvictAt: req.Now.Add(grace),
			Reason: fmt.Sprintf("preempted to place %s (priority %d); checkpoint within %s", req.Preemptor.ID, req.Preemptor.Priority, grace),
		})
	}
	return victims, notices
}

// nodesOf lists the distinct nodes of pods, sorted.
func nodesOf(ov *cluster.Overlay, pods []cluster.PodRef) []string {
	seen := map[string]bool{}
	var out []string
	for _, ref := range pods {
		if bp, ok := ov.Pod(ref); ok && !seen[bp.Node] {
			seen[bp.Node] = true
			out = append(out, bp.Node)
		}
	}
	sort.Strings(out)
	return out
}

func validatePreemption(ov *cluster.Overlay, fit GangFit, req PreemptionRequest) error {
	if ov == nil {
		return fmt.Errorf("preemption for %s: overlay: must not be nil", req.Preemptor.ID)
	}
	if fit == nil {
		return fmt.Errorf("preemption for %s: fit: must not be nil", req.Preemptor.ID)
	}
	if req.GracePeriod < 0 {
		return fmt.Errorf("preemption for %s: gracePeriod: %s is negative", req.Preemptor.ID, req.GracePeriod)
	}
	if err := validateBudgets(req); err != nil {
		return fmt.Errorf("preemption for %s: %w", req.Preemptor.ID, err)
	}
	return validateRunning(req.Running)
}

// validateBudgets rejects negative budgets and history amounts; queues are visited in
// name order so the first error is always the same.
func validateBudgets(req PreemptionRequest) error {
	queues := make([]string, 0, len(req.Budgets))
	for q := range req.Budgets {
		queues = append(queues, q)
	}
	sort.Strings(queues)
	for _, q := range queues {
		b := req.Budgets[q]
		if b.MaxGPUs < 0 {
			return fmt.Errorf("disruption budget of queue %q: maxGPUs: %d is negative", q, b.MaxGPUs)
		}
		if b.Window < 0 {
			return fmt.Errorf("disruption budget of queue %q: window: %s is negative", q, b.Window)
		}
	}
	for i, h := range req.History {
		if h.GPUMilli < 0 {
			return fmt.Errorf("preemption history #%d (%s): gpuMilli: %d is negative", i, h.Workload, h.GPUMilli)
		}
	}
	return nil
}

// validateRunning rejects duplicate IDs and negative durations or GPU.
func validateRunning(rs []Running) error {
	c := newRunningChecker(len(rs))
	for i, r := range rs {
		if err := c.check(i, r); err != nil {
			return err
		}
	}
	return nil
}

// WorkloadFit is the GangFit of PlaceWorkload: w's whole gang under its flavors.
func WorkloadFit(w *api.Workload, fc FlavorConstraints, opts Options) GangFit {
	return func(ov *cluster.Overlay) (*Placement, bool) {
		pl, d := PlaceWorkload(ov, w, fc, opts)
		if d != nil {
			return nil, false
		}
		return &pl, true
	}
}

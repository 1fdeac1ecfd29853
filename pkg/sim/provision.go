package sim

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// Kueue's ProvisioningRequest admission check, simulated with cluster-autoscaler behind
// it. A workload of a ClusterQueue with checks first reserves quota (the engine's
// QuotaReserved); for each check that applies, a ProvisioningRequest is made:
//
//   - check-capacity.autoscaling.x-k8s.io is Provisioned at once when the gang fits the
//     cluster's free capacity now, and Failed otherwise;
//   - best-effort-atomic-scale-up.autoscaling.x-k8s.io is Provisioned at once when the
//     gang fits now; else the first autoscaled NodePool (by name) that can hold the whole
//     gang on new nodes within its api.AnnotationAutoscaleMax gets them, and they join
//     after its api.AnnotationProvisionDelay, when the request is Provisioned; when no
//     pool can (atomic: all or none) the request Fails.
//
// When every check is Ready the reservation is handed back and the workload queues again
// at its place, to be placed like any other (on the new nodes, when it needs them). A
// Failed request is retried (Kueue's Retry: quota released, backoff by the config's
// retryStrategy) up to backoffLimitCount times, after which the check is Rejected and
// the workload deactivated. Nodes the autoscaler adds stay (no scale-down).

// Event kinds of the admission check flow.
const (
	// EvQuotaReserved: quota reserved while the workload's admission checks run.
	EvQuotaReserved EventKind = "quota-reserved"
	// EvAdmissionCheck: a check changed state; Reason says which, its request and why.
	EvAdmissionCheck EventKind = "admission-check"
)

// provisioner is the simulator's ProvisioningRequest controller and autoscaler.
type provisioner struct {
	checks  api.AdmissionChecks
	flavors map[string]api.ResourceFlavor
	pools   []*autoscaledPool // by name
	wls     map[api.WorkloadID]*provWorkload
}

// autoscaledPool is a NodePool the simulated autoscaler may grow.
type autoscaledPool struct {
	pool  api.NodePool
	max   int           // most nodes, the first ones included
	delay time.Duration // from a request to its nodes joining
	size  int           // nodes it has or was asked for, against max
	next  int           // the index the next new node is named with (never reused)
}

// provWorkload is one workload's admission check state.
type provWorkload struct {
	reserved bool
	asg      admission.Assignment
	// run counts reservations; step events carry it, so a step of a reservation given up
	// since is dropped.
	run    int
	checks []*checkRun
	// attempts counts the requests made per check, over all reservations (Kueue's
	// request names end with it, and the retry limit counts it).
	attempts map[string]int
	// ready: every check was Ready and the workload was queued again to be placed;
	// readyRun is its run count then (a later start and eviction resets the checks).
	ready    bool
	readyRun int
	rejected bool
}

// checkRun is one check's request for the current reservation.
type checkRun struct {
	check   api.ClusterQueueCheck
	config  api.ProvisioningRequestConfig
	state   api.CheckState
	request string // the ProvisioningRequest's name; empty when none was needed
	failed  bool   // the request will fail at dueAt (else it will be Provisioned)
	dueAt   time.Duration
	pool    *autoscaledPool
	from    int // the first new node's index in pool
	nodes   int // new nodes asked of pool, not added yet
	message string
}

// newProvisioner reads the admission checks and the autoscaled pools.
func newProvisioner(objs *api.Objects) (*provisioner, error) {
	p := &provisioner{checks: objs.AdmissionChecks, flavors: map[string]api.ResourceFlavor{}, wls: map[api.WorkloadID]*provWorkload{}}
	for _, f := range objs.Flavors {
		p.flavors[f.Name] = f
	}
	for _, np := range objs.NodePools {
		ap, ok, err := readAutoscaledPool(np)
		if err != nil {
			return nil, err
		}
		if ok {
			p.pools = append(p.pools, ap)
		}
	}
	sort.Slice(p.pools, func(i, j int) bool { return p.pools[i].pool.Name < p.pools[j].pool.Name })
	for cq, refs := range objs.AdmissionChecks.ByClusterQueue {
		for _, r := range refs {
			if _, err := p.configOf(r); err != nil {
				return nil, fmt.Errorf("simulate: ClusterQueue %s: %w", cq, err)
			}
		}
	}
	return p, nil
}

// readAutoscaledPool reads a pool's autoscaling annotations; ok is false for a pool
// without api.AnnotationAutoscaleMax.
func readAutoscaledPool(np api.NodePool) (*autoscaledPool, bool, error) {
	v, ok := np.Annotations[api.AnnotationAutoscaleMax]
	if !ok {
		return nil, false, nil
	}
	fail := func(ann, format string, args ...any) error {
		return fmt.Errorf("simulate: NodePool %s (%s): annotation %s: %s", np.Name, np.Source, ann, fmt.Sprintf(format, args...))
	}
	maxNodes, err := strconv.Atoi(v)
	if err != nil || maxNodes < 0 {
		return nil, false, fail(api.AnnotationAutoscaleMax, "%q: want a whole number of nodes", v)
	}
	if maxNodes < np.Count {
		return nil, false, fail(api.AnnotationAutoscaleMax, "%d is below the pool's count %d", maxNodes, np.Count)
	}
	ap := &autoscaledPool{pool: np, max: maxNodes, delay: api.DefaultProvisionDelay, size: np.Count, next: np.Count}
	if d, ok := np.Annotations[api.AnnotationProvisionDelay]; ok {
		delay, err := api.ParseDuration(d)
		if err != nil || delay < 0 {
			return nil, false, fail(api.AnnotationProvisionDelay, "%q: want a duration such as 90s or 5m", d)
		}
		ap.delay = delay
	}
	return ap, true, nil
}

// configOf is the ProvisioningRequestConfig behind a ClusterQueue's check (the loader
// checked that both exist; a hand-built Objects may not have).
func (p *provisioner) configOf(r api.ClusterQueueCheck) (api.ProvisioningRequestConfig, error) {
	ch, ok := p.checks.Check(r.Name)
	if !ok {
		return api.ProvisioningRequestConfig{}, fmt.Errorf("AdmissionCheck %q not found", r.Name)
	}
	cfg, ok := p.checks.Config(ch.Config)
	if !ok {
		return api.ProvisioningRequestConfig{}, fmt.Errorf("AdmissionCheck %s: ProvisioningRequestConfig %q not found", r.Name, ch.Config)
	}
	return cfg, nil
}

// applicable are the checks of w's ClusterQueue that run for assignment a.
func (p *provisioner) applicable(a admission.Assignment) []api.ClusterQueueCheck {
	refs := p.checks.ByClusterQueue[a.ClusterQueue]
	if len(refs) == 0 {
		return nil
	}
	flavors := a.FlavorNames()
	var out []api.ClusterQueueCheck
	for _, r := range refs {
		if r.AppliesTo(flavors) {
			out = append(out, r)
		}
	}
	return out
}

// checkGate answers the engine's question for the simulator (engine.AdmissionChecks).
type checkGate struct{ s *Simulator }

// Pending: the workload's checks apply and have not all been Ready since it last ran.
func (g checkGate) Pending(w *api.Workload, a admission.Assignment) bool {
	p := g.s.prov
	if len(p.applicable(a)) == 0 {
		return false
	}
	pw := p.wls[w.ID()]
	if pw == nil || !pw.ready {
		return true
	}
	// Ready holds for the placement that follows; a run evicted since starts over, as
	// Kueue resets a workload's checks when it is evicted.
	st := g.s.wls[w.ID()]
	return st != nil && st.run > pw.readyRun && st.phase == plan.Pending
}

// admissionChecks is the engine's view of the checks; nil when no ClusterQueue has
// any, so a cycle without checks asks nothing.
func (s *Simulator) admissionChecks() engine.AdmissionChecks {
	if s.prov == nil || !s.prov.checks.Any() {
		return nil
	}
	return checkGate{s: s}
}

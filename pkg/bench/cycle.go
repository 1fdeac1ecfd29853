package bench

import (
	"fmt"
	"sort"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// CycleSpec is the scheduler-cycle experiment: a generated fleet with every job pending
// at once (Scale.Spread is ignored), then cycles measured one by one: the first (which
// fills the cluster), Quiet cycles in which nothing changed, and Bursts cycles each
// after BurstSize running jobs complete.
type CycleSpec struct {
	Scale     ScaleSpec
	Quiet     int
	Bursts    int
	BurstSize int
	// Progress is told each cycle timed, of 1+Quiet+Bursts.
	Progress Progress
}

// CycleResult is what the cycles cost.
type CycleResult struct {
	Pending int `json:"pending"`
	// First is the first cycle; FirstDecisions the workloads it decided (admitted,
	// rejected or reserved), so FirstDecisions/First is the admission decision rate.
	First          time.Duration `json:"firstNs"`
	FirstDecisions int           `json:"firstDecisions"`
	FirstAdmitted  int           `json:"firstAdmitted"`
	// Quiet and Burst are the measured cycles, sorted.
	Quiet []time.Duration `json:"quietNs"`
	Burst []time.Duration `json:"burstNs"`
	// BurstAdmitted is how many workloads the burst cycles admitted in all.
	BurstAdmitted int `json:"burstAdmitted"`
}

// driver is the smallest committer around the scheduler: admissions bind on the
// snapshot and reserve quota (re-checked by both), as the simulator's committer does.
type driver struct {
	sched   *engine.Scheduler
	snap    *cluster.Snapshot
	quota   *admission.Quota
	now     time.Time
	running map[api.WorkloadID]*runningJob
	order   []api.WorkloadID // admission order, for deterministic bursts
}

type runningJob struct {
	view     placement.Running
	bindings []plan.Binding
}

// RunCycles runs the experiment. Every cycle is timed alone (wall time; the machine's
// load is the caller's to report).
func RunCycles(spec CycleSpec) (CycleResult, error) {
	if err := spec.Validate(); err != nil {
		return CycleResult{}, err
	}
	spec.Scale.Spread = 0
	objs, err := Generate(spec.Scale)
	if err != nil {
		return CycleResult{}, err
	}
	d, err := newDriver(objs)
	if err != nil {
		return CycleResult{}, err
	}
	res := CycleResult{Pending: len(objs.Workloads)}
	total := 1 + spec.Quiet + spec.Bursts
	spec.Progress.report(0, total)
	p, took := d.cycle(false)
	res.First, res.FirstDecisions = took, len(p.Admissions)+len(p.Rejections)+len(p.Reservations)
	if res.FirstAdmitted, err = d.commit(p); err != nil {
		return res, err
	}
	spec.Progress.report(1, total)
	for i := 0; i < spec.Quiet; i++ {
		p, took := d.cycle(true)
		res.Quiet = append(res.Quiet, took)
		spec.Progress.report(2+i, total)
		if _, err := d.commit(p); err != nil {
			return res, err
		}
	}
	for i := 0; i < spec.Bursts; i++ {
		d.now = d.now.Add(time.Minute)
		if err := d.finish(spec.BurstSize); err != nil {
			return res, err
		}
		p, took := d.cycle(false)
		res.Burst = append(res.Burst, took)
		spec.Progress.report(2+spec.Quiet+i, total)
		n, err := d.commit(p)
		if err != nil {
			return res, err
		}
		res.BurstAdmitted += n
	}
	sort.Slice(res.Quiet, func(i, j int) bool { return res.Quiet[i] < res.Quiet[j] })
	sort.Slice(res.Burst, func(i, j int) bool { return res.Burst[i] < res.Burst[j] })
	return res, nil
}

func newDriver(objs *api.Objects) (*driver, error) {
	sched, err := engine.Build(objs, engine.DefaultPolicy())
	if err != nil {
		return nil, err
	}
	var nodes []cluster.Node
	for _, p := range objs.NodePools {
		ns, err := cluster.ExpandPool(p)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, ns...)
	}
	snap, err := cluster.NewSnapshot(nodes, objs.Topologies)
	if err != nil {
		return nil, err
	}
	quota, err := admission.NewQuota(objs, admission.Options{})
	if err != nil {
		return nil, err
	}
	d := &driver{sched: sched, snap: snap, quota: quota, now: sim0(), running: map[api.WorkloadID]*runningJob{}}
	for i := range objs.Workloads {
		w := &objs.Workloads[i]
		if err := sched.Submit(w, d.now, w.Timing.Duration); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// sim0 is the experiment's clock origin (fixed, so runs are reproducible).
func sim0() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// cycle runs and times one cycle.
func (d *driver) cycle(unchanged bool) (plan.Plan, time.Duration) {
	views := make([]placement.Running, 0, len(d.running))
	for _, id := range d.order {
		if r, ok := d.running[id]; ok {
			views = append(views, r.view)
		}
	}
	start := time.Now()
	p := d.sched.Cycle(engine.World{Now: d.now, Cluster: d.snap, Quota: d.quota, Running: views, Unchanged: unchanged})
	return p, time.Since(start)
}

// commit applies the plan's admissions (bindings and quota, re-checked) and hands the
// plan back; it returns how many were admitted.
func (d *driver) commit(p plan.Plan) (int, error) {
	if err := p.Validate(); err != nil {
		return 0, fmt.Errorf("bench: invalid plan: %w", err)
	}
	var applied []api.WorkloadID
	ov, byWorkload := d.snap.Overlay(), p.BindingsByWorkload()
	for _, a := range p.Admissions {
		bs := byWorkload[a.Workload]
		changes := make([]cluster.Change, 0, len(bs))
		view := placement.Running{ID: a.Workload, Queue: a.ClusterQueue, StartedAt: d.now, Preemptible: true}
		for _, b := range bs {
			ref := cluster.PodRef{Workload: b.Workload, PodSet: b.PodSet, Index: b.Index}
			changes = append(changes, cluster.Change{Op: cluster.OpBind, Pod: cluster.BoundPod{Ref: ref, Node: b.Node, Requests: b.Requests, Devices: b.Assignment}})
			view.Pods = append(view.Pods, ref)
			view.GPUMilli += b.Assignment.MilliGPU()
		}
		if err := ov.ApplyGroup(changes); err != nil {
			return 0, fmt.Errorf("bench: bind %s: %w", a.Workload, err)
		}
		if err := d.quota.Admit(d.workload(a.Workload), a.Quota); err != nil {
			return 0, fmt.Errorf("bench: admit %s: %w", a.Workload, err)
		}
		d.sched.Started(a.Workload, d.now)
		d.running[a.Workload] = &runningJob{view: view, bindings: bs}
		d.order = append(d.order, a.Workload)
		applied = append(applied, a.Workload)
	}
	if len(applied) > 0 {
		d.snap = ov.Seal()
	}
	d.sched.Committed(p, applied)
	return len(applied), nil
}

// workload is the scheduler's model of an admitted workload, for quota.
func (d *driver) workload(id api.WorkloadID) *api.Workload { return d.sched.Workload(id) }

// finish completes the n longest-running jobs: their pods and quota are freed.
func (d *driver) finish(n int) error {
	var done []api.WorkloadID
	for _, id := range d.order {
		if len(done) == n {
			break
		}
		if _, ok := d.running[id]; ok {
			done = append(done, id)
		}
	}
	ov := d.snap.Overlay()
	defer func() { d.snap = ov.Seal() }()
	for _, id := range done {
		r := d.running[id]
		changes := make([]cluster.Change, 0, len(r.bindings))
		for _, ref := range r.view.Pods {
			if bp, ok := ov.Pod(ref); ok {
				changes = append(changes, cluster.Change{Op: cluster.OpRemove, Pod: bp})
			}
		}
		if err := ov.ApplyGroup(changes); err != nil {
			return fmt.Errorf("bench: release %s: %w", id, err)
		}
		if err := d.quota.Release(id); err != nil {
			return fmt.Errorf("bench: release quota of %s: %w", id, err)
		}
		delete(d.running, id)
		d.sched.Finished(id)
	}
	return nil
}

// Percentile is the p-th percentile (nearest rank) of sorted durations; 0 when empty.
func Percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[max((len(sorted)*p+99)/100-1, 0)]
}

// Validate reports a spec that cannot run.
func (s CycleSpec) Validate() error {
	if err := s.Scale.Validate(); err != nil {
		return err
	}
	switch {
	case s.Quiet < 0:
		return fmt.Errorf("cycles: --quiet %d: must not be negative", s.Quiet)
	case s.Bursts < 0:
		return fmt.Errorf("cycles: --bursts %d: must not be negative", s.Bursts)
	case s.Bursts > 0 && s.BurstSize <= 0:
		return fmt.Errorf("cycles: --burst-size %d: must be positive", s.BurstSize)
	}
	return nil
}

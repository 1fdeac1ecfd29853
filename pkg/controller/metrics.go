package controller

import (
	"context"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the controller's Prometheus series. They are registered on the registry
// passed to NewMetrics (controller-runtime's, served on /metrics), never on a global.
//
// Where Gantry and Kueue share a concept the series has Kueue's name after the gantry_
// prefix (kueue_pending_workloads is gantry_pending_workloads) and Kueue's labels, so
// dashboards and alerts written for one read the other; the rest is Gantry's own (the
// reason breakdown, GPU accounting by pool and sharing mode, node GPU health, cycles).
// docs/metrics.md lists them all.
type Metrics struct {
	// Kueue's series.
	pending        *prometheus.GaugeVec     // {cluster_queue, status}
	admittedActive *prometheus.GaugeVec     // {cluster_queue}
	admittedTotal  *prometheus.CounterVec   // {cluster_queue}
	admissionWait  *prometheus.HistogramVec // {cluster_queue}
	evictedTotal   *prometheus.CounterVec   // {cluster_queue, reason}
	preemptedTotal *prometheus.CounterVec   // {preempting_cluster_queue, reason, layer}
	cqStatus       *prometheus.GaugeVec     // {cluster_queue, status}
	usage          *prometheus.GaugeVec     // {cohort, cluster_queue, flavor, resource}
	nominal        *prometheus.GaugeVec     // same labels
	borrowingLimit *prometheus.GaugeVec     // same labels, only where a limit is set
	lendingLimit   *prometheus.GaugeVec     // same labels, only where a limit is set
	weightedShare  *prometheus.GaugeVec     // {cluster_queue}
	// Gantry's own.
	pendingReason *prometheus.GaugeVec // {cluster_queue, layer, reason}
	borrowed      *prometheus.GaugeVec // {cohort, cluster_queue, flavor, resource}
	gpuAllocated  *prometheus.GaugeVec // {pool, mode}
	gpuFree       *prometheus.GaugeVec // {pool, mode}
	gpuStranded   *prometheus.GaugeVec // {pool}
	nodeGPUs      *prometheus.GaugeVec // {node, pool, model, health}
	cycle         prometheus.Histogram
	bindings      prometheus.Counter
}

// The values of the status label of gantry_pending_workloads, as Kueue's: active
// workloads are tried in the next cycle; inadmissible ones are parked until a change in
// the cluster or the queues can help them.
const (
	pendingActive       = "active"
	pendingInadmissible = "inadmissible"
)

// The values of the status label of gantry_cluster_queue_status. Kueue's "pending" is a
// queue that admits nothing new: Gantry's stop policies Hold and HoldAndDrain.
const (
	cqActive  = "active"
	cqPending = "pending"
)

// The values of the reason label of gantry_preempted_workloads_total. Kueue tells four
// cohort reasons apart by the rule that chose the victim; the engine's notices do not
// carry the rule, so Gantry says only whether the victim was in the preemptor's queue.
const (
	preemptInClusterQueue = "InClusterQueue"
	preemptInCohort       = "InCohort"
)

func newGauge(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

func newCounter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// newQuotaGauge is a per-queue, flavor and resource gauge with Kueue's labels and
// Kueue's units (quotaValue).
func newQuotaGauge(name, help string) *prometheus.GaugeVec {
	return newGauge(name, help+" In the resource's base unit: CPU cores, bytes, counts (nvidia.com/gpu: GPUs; gantry.dev/gpu-milli: thousandths of a GPU).",
		"cohort", "cluster_queue", "flavor", "resource")
}

// quotaValue is an amount in the base unit Kueue reports: Gantry counts CPU in
// thousandths, Kubernetes quantities (and Kueue's series) in cores. Prometheus samples
// are float64 by API; the amounts themselves stay integers everywhere else.
func quotaValue(r resources.Name, a resources.Amount) float64 {
	if r == resources.CPU {
		return float64(a) / 1000
	}
	return float64(a)
}

// NewMetrics creates the series and registers them on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		pending: newGauge("gantry_pending_workloads",
			"Pending workloads by ClusterQueue and status: active (tried in the next cycle) or inadmissible (parked until a change can help).",
			"cluster_queue", "status"),
		admittedActive: newGauge("gantry_admitted_active_workloads",
			"Admitted workloads that have not finished, by ClusterQueue.", "cluster_queue"),
		admittedTotal: newCounter("gantry_admitted_workloads_total", "Workloads admitted, by ClusterQueue.", "cluster_queue"),
		admissionWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gantry_admission_wait_time_seconds",
			Help:    "Time from creation or requeue to admission, by ClusterQueue.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 16)}, []string{"cluster_queue"}),
		evictedTotal: newCounter("gantry_evicted_workloads_total",
			"Workloads evicted, by the ClusterQueue that had admitted them and the eviction reason.", "cluster_queue", "reason"),
		preemptedTotal: newCounter("gantry_preempted_workloads_total",
			"Preemption notices given to admitted workloads, by the preemptor's ClusterQueue, whether the victim was in that queue (InClusterQueue) or another of the cohort (InCohort), and the layer that preempted (admission: quota; placement: room on the nodes).",
			"preempting_cluster_queue", "reason", "layer"),
		cqStatus: newGauge("gantry_cluster_queue_status",
			"1 for the ClusterQueue's status (active, or pending while a stop policy holds it), 0 for the other.", "cluster_queue", "status"),
		usage:          newQuotaGauge("gantry_cluster_queue_resource_usage", "Quota in use by admitted workloads."),
		nominal:        newQuotaGauge("gantry_cluster_queue_nominal_quota", "Nominal quota."),
		borrowingLimit: newQuotaGauge("gantry_cluster_queue_borrowing_limit", "Borrowing limit, where one is set (absent: unlimited)."),
		lendingLimit:   newQuotaGauge("gantry_cluster_queue_lending_limit", "Lending limit, where one is set (absent: unlimited)."),
		weightedShare: newGauge("gantry_cluster_queue_weighted_share",
			"Weighted dominant resource share in thousandths (0 while the queue borrows nothing).", "cluster_queue"),
		pendingReason: newGauge("gantry_pending_workloads_by_reason",
			"Pending workloads by ClusterQueue and their latest decision: the layer that refused them and its reason code (Reserved: capacity is held for them).",
			"cluster_queue", "layer", "reason"),
		borrowed: newQuotaGauge("gantry_cluster_queue_borrowed_quota", "Quota borrowed from the cohort."),
		gpuAllocated: newGauge("gantry_gpu_allocated_milli",
			"Healthy GPU in use, in milli-GPU, by node pool and sharing mode.", "pool", "mode"),
		gpuFree: newGauge("gantry_gpu_free_milli",
			"Healthy GPU free, in milli-GPU, by node pool and sharing mode.", "pool", "mode"),
		gpuStranded: newGauge("gantry_gpu_stranded_milli",
			"Free GPU, in milli-GPU, on nodes of the pool where no pending pod's GPU request fits (0 while nothing is pending).", "pool"),
		nodeGPUs: newGauge("gantry_node_gpus",
			"GPUs per node by health, as the node agent reports it (healthy or unhealthy).", "node", "pool", "model", "health"),
		cycle: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gantry_cycle_duration_seconds",
			Help: "Duration of one read-schedule-commit cycle.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		bindings: prometheus.NewCounter(prometheus.CounterOpts{Name: "gantry_pod_bindings_total",
			Help: "Pods bound by Gantry."}),
	}
	for _, c := range []prometheus.Collector{m.pending, m.admittedActive, m.admittedTotal, m.admissionWait, m.evictedTotal,
		m.preemptedTotal, m.cqStatus, m.usage, m.nominal, m.borrowingLimit, m.lendingLimit, m.weightedShare,
		m.pendingReason, m.borrowed, m.gpuAllocated, m.gpuFree, m.gpuStranded, m.nodeGPUs, m.cycle, m.bindings} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) admitted(cq string, wait time.Duration) {
	m.admittedTotal.WithLabelValues(cq).Inc()
	m.admissionWait.WithLabelValues(cq).Observe(wait.Seconds())
}

// preempted counts one preemption notice given to victim. A notice without a preemptor
// (a drain, a spot interruption) is a cluster cause, not a preemption: it is counted
// when the workload is evicted.
func (m *Metrics) preempted(cs *cycleState, victim *tracked, n plan.Notice) {
	if n.By == "" {
		return
	}
	by := ""
	if t := cs.byID[n.By]; t != nil {
		by = t.cq
	}
	reason := preemptInCohort
	if adm := victim.obj.Status.Admission; adm != nil && adm.ClusterQueue == by {
		reason = preemptInClusterQueue
	}
	m.preemptedTotal.WithLabelValues(by, reason, string(n.Layer)).Inc()
}

func (m *Metrics) evicted(cq, reason string) { m.evictedTotal.WithLabelValues(cq, reason).Inc() }

// decisions is what the engine's scheduler says about a pending workload: the
// reservation it holds, why it was last not admitted, and whether it is parked
// (engine.Scheduler).
type decisions interface {
	Reservation(id api.WorkloadID) (plan.Reservation, bool)
	LastRejection(id api.WorkloadID) (plan.Rejection, bool)
	Parked(id api.WorkloadID) engine.Park
}

// observeCycle refreshes the gauges from one pass's state, but the GPU accounting,
// which walks every node: it returns what that needs (the pass's cluster, read-only,
// and the pending shapes), for the pass to hand to observeGPUsOf off its path.
func (m *Metrics) observeCycle(cs *cycleState, d decisions, took time.Duration) gpuCount {
	m.cycle.Observe(took.Seconds())
	pending := cs.pending()
	m.observePending(cs.quota, pending, d)
	m.observeAdmitted(cs)
	m.observeQuota(cs.quota)
	return gpuCount{snap: cs.cluster, shapes: pendingShapes(pending)}
}

// gpuCount is one pass's GPU accounting to do: its cluster and the GPU requests of its
// pending pods.
type gpuCount struct {
	ctx    context.Context
	snap   *cluster.Snapshot
	shapes []devices.Request
}

// gpuMetricsEvery spaces the GPU accounting runs: it walks every node (40 ms at
// 10,000), passes may come five times a second, and a scrape reads it every 15 s or
// more.
const gpuMetricsEvery = time.Second

// observeGPUsOf counts and reports one pass's GPU accounting, then waits
// gpuMetricsEvery (or until g.ctx ends) before the next may run.
func (m *Metrics) observeGPUsOf(g gpuCount) {
	m.observeGPUs(countGPUUnits(g.snap.Overlay(), g.shapes))
	sleepCtx(g.ctx, gpuMetricsEvery)
}

// observePending counts each pending workload by status and by its latest decision,
// which the scheduler keeps: a parked workload is not decided again every pass, yet it
// is still pending. Every known ClusterQueue reports both statuses, 0 included, so an
// alert can tell an empty queue from a missing series.
func (m *Metrics) observePending(q *admission.Quota, pending []engine.Pending, d decisions) {
	m.pending.Reset()
	m.pendingReason.Reset()
	if q != nil {
		for _, cq := range q.ClusterQueues() {
			m.pending.WithLabelValues(cq, pendingActive).Set(0)
			m.pending.WithLabelValues(cq, pendingInadmissible).Set(0)
		}
	}
	for _, p := range pending {
		id := p.Workload.ID()
		m.pending.WithLabelValues(p.ClusterQueue, queueStatusOf(d.Parked(id))).Inc()
		if _, ok := d.Reservation(id); ok {
			m.pendingReason.WithLabelValues(p.ClusterQueue, string(plan.LayerPlacement), ReasonReserved).Inc()
		} else if r, ok := d.LastRejection(id); ok {
			m.pendingReason.WithLabelValues(r.ClusterQueue, string(r.Layer), string(r.Reason)).Inc()
		}
	}
}

// queueStatusOf maps the scheduler's parking to Kueue's pending status. A workload
// parked behind a reservation is retried on any change, so it counts as active.
func queueStatusOf(p engine.Park) string {
	if p == engine.NotParked || p == engine.ParkedReserved {
		return pendingActive
	}
	return pendingInadmissible
}

// observeAdmitted counts the admitted, unfinished workloads per ClusterQueue.
func (m *Metrics) observeAdmitted(cs *cycleState) {
	m.admittedActive.Reset()
	if cs.quota != nil {
		for _, cq := range cs.quota.ClusterQueues() {
			m.admittedActive.WithLabelValues(cq).Set(0)
		}
	}
	for _, t := range cs.byID {
		if t.admitted() && !t.finished() {
			m.admittedActive.WithLabelValues(t.obj.Status.Admission.ClusterQueue).Inc()
		}
	}
}

// observeQuota reports every ClusterQueue's status, share and quota cells.
func (m *Metrics) observeQuota(q *admission.Quota) {
	for _, g := range []*prometheus.GaugeVec{m.cqStatus, m.usage, m.nominal, m.borrowingLimit, m.lendingLimit, m.borrowed, m.weightedShare} {
		g.Reset()
	}
	if q == nil {
		return
	}
	for _, name := range q.ClusterQueues() {
		cq, ok := q.ClusterQueue(name)
		if !ok {
			continue
		}
		m.observeQueueStatus(name, cq.StopPolicy)
		m.weightedShare.WithLabelValues(name).Set(float64(q.Share(name)))
		for _, rg := range cq.ResourceGroups {
			for _, f := range rg.Flavors {
				for _, r := range f.Resources {
					m.observeCell(q, cq, f.Name, r)
				}
			}
		}
	}
}

func (m *Metrics) observeQueueStatus(cq string, stop api.StopPolicy) {
	on, off := cqActive, cqPending
	if stop != "" && stop != api.StopNone {
		on, off = off, on
	}
	m.cqStatus.WithLabelValues(cq, on).Set(1)
	m.cqStatus.WithLabelValues(cq, off).Set(0)
}

// observeCell reports one flavor and resource of a ClusterQueue.
func (m *Metrics) observeCell(q *admission.Quota, cq *api.ClusterQueue, flavor string, r api.ResourceQuota) {
	l := []string{cq.Cohort, cq.Name, flavor, string(r.Name)}
	m.usage.WithLabelValues(l...).Set(quotaValue(r.Name, q.Usage(cq.Name, flavor, r.Name)))
	m.nominal.WithLabelValues(l...).Set(quotaValue(r.Name, q.Nominal(cq.Name, flavor, r.Name)))
	m.borrowed.WithLabelValues(l...).Set(quotaValue(r.Name, q.Borrowed(cq.Name, flavor, r.Name)))
	if r.BorrowingLimit != nil {
		m.borrowingLimit.WithLabelValues(l...).Set(quotaValue(r.Name, *r.BorrowingLimit))
	}
	if r.LendingLimit != nil {
		m.lendingLimit.WithLabelValues(l...).Set(quotaValue(r.Name, *r.LendingLimit))
	}
}

// observeGPUs reports the GPU accounting of one pass.
func (m *Metrics) observeGPUs(u gpuUnits) {
	for _, g := range []*prometheus.GaugeVec{m.gpuAllocated, m.gpuFree, m.gpuStranded, m.nodeGPUs} {
		g.Reset()
	}
	for k, v := range u.Free {
		m.gpuFree.WithLabelValues(k.Pool, k.Mode).Set(float64(v))
	}
	for k, v := range u.Allocated {
		m.gpuAllocated.WithLabelValues(k.Pool, k.Mode).Set(float64(v))
	}
	for pool, v := range u.Stranded {
		m.gpuStranded.WithLabelValues(pool).Set(float64(v))
	}
	for k, n := range u.Nodes {
		m.nodeGPUs.WithLabelValues(k.Node, k.Pool, k.Model, k.Health).Set(float64(n))
	}
}

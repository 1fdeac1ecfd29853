package controller

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the controller's Prometheus series. They are registered on the registry
// passed to NewMetrics (controller-runtime's, served on /metrics), never on a global.
type Metrics struct {
	pending       *prometheus.GaugeVec
	admissionWait *prometheus.HistogramVec
	admittedTotal *prometheus.CounterVec
	evictedTotal  *prometheus.CounterVec
	preemptions   *prometheus.CounterVec
	quotaUsage    *prometheus.GaugeVec
	quotaNominal  *prometheus.GaugeVec
	quotaBorrowed *prometheus.GaugeVec
	gpuAllocated  *prometheus.GaugeVec
	gpuFree       *prometheus.GaugeVec
	gpuStranded   prometheus.Gauge
	cycle         prometheus.Histogram
	bindings      prometheus.Counter
}

// NewMetrics creates the series and registers them on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gantry_pending_workloads",
			Help: "Pending workloads by ClusterQueue and reason code."}, []string{"cluster_queue", "reason"}),
		admissionWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gantry_admission_wait_seconds",
			Help:    "Time from queueing to admission.",
			Buckets: prometheus.ExponentialBuckets(0.1, 2, 16)}, []string{"cluster_queue"}),
		admittedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gantry_admitted_workloads_total",
			Help: "Workloads admitted."}, []string{"cluster_queue"}),
		evictedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gantry_evicted_workloads_total",
			Help: "Workloads evicted, by reason."}, []string{"cluster_queue", "reason"}),
		preemptions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gantry_preemptions_total",
			Help: "Preemption notices given, by layer."}, []string{"cluster_queue", "layer"}),
		quotaUsage: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gantry_quota_usage",
			Help: "Quota in use per ClusterQueue, flavor and resource (canonical units)."}, []string{"cluster_queue", "flavor", "resource"}),
		quotaNominal: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gantry_quota_nominal",
			Help: "Nominal quota per ClusterQueue, flavor and resource."}, []string{"cluster_queue", "flavor", "resource"}),
		quotaBorrowed: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gantry_quota_borrowed",
			Help: "Quota borrowed from the cohort."}, []string{"cluster_queue", "flavor", "resource"}),
		gpuAllocated: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gantry_gpu_milli_allocated",
			Help: "GPU in use, in milli-GPU, by node pool and sharing mode."}, []string{"pool", "mode"}),
		gpuFree: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gantry_gpu_milli_free",
			Help: "GPU free, in milli-GPU, by node pool and sharing mode."}, []string{"pool", "mode"}),
		gpuStranded: prometheus.NewGauge(prometheus.GaugeOpts{Name: "gantry_gpu_milli_stranded",
			Help: "Free GPU, in milli-GPU, on nodes where no pending pod shape fits."}),
		cycle: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gantry_cycle_duration_seconds",
			Help: "Duration of one read-schedule-commit cycle.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		bindings: prometheus.NewCounter(prometheus.CounterOpts{Name: "gantry_pod_bindings_total",
			Help: "Pods bound by Gantry."}),
	}
	for _, c := range []prometheus.Collector{m.pending, m.admissionWait, m.admittedTotal, m.evictedTotal, m.preemptions,
		m.quotaUsage, m.quotaNominal, m.quotaBorrowed, m.gpuAllocated, m.gpuFree, m.gpuStranded, m.cycle, m.bindings} {
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

func (m *Metrics) preempted(adm *v1alpha1.Admission, layer plan.Layer) {
	cq := ""
	if adm != nil {
		cq = adm.ClusterQueue
	}
	m.preemptions.WithLabelValues(cq, string(layer)).Inc()
}

func (m *Metrics) evicted(cq, reason string) { m.evictedTotal.WithLabelValues(cq, reason).Inc() }

// decisions is what the engine's scheduler says about a pending workload: the
// reservation it holds, or why it was last not admitted (engine.Scheduler).
type decisions interface {
	Reservation(id api.WorkloadID) (plan.Reservation, bool)
	LastRejection(id api.WorkloadID) (plan.Rejection, bool)
}

// observeCycle refreshes the gauges from one pass's state. The pending gauge counts
// each pending workload by its latest decision, which the scheduler keeps: a parked
// workload is not decided again every pass, yet it is still pending.
func (m *Metrics) observeCycle(cs *cycleState, d decisions, took time.Duration) {
	m.cycle.Observe(took.Seconds())
	m.pending.Reset()
	pending := cs.pending()
	for _, p := range pending {
		id := p.Workload.ID()
		if _, ok := d.Reservation(id); ok {
			m.pending.WithLabelValues(p.ClusterQueue, ReasonReserved).Inc()
		} else if r, ok := d.LastRejection(id); ok {
			m.pending.WithLabelValues(r.ClusterQueue, string(r.Reason)).Inc()
		}
	}
	if cs.quota != nil {
		m.observeQuota(cs.quota)
	}
	m.gpuAllocated.Reset()
	m.gpuFree.Reset()
	// Prometheus gauges take float64 by API; the counts themselves are integers.
	u := countGPUUnits(cs.cluster.Overlay(), pending)
	for k, v := range u.Free {
		m.gpuFree.WithLabelValues(k.Pool, k.Mode).Set(float64(v))
	}
	for k, v := range u.Allocated {
		m.gpuAllocated.WithLabelValues(k.Pool, k.Mode).Set(float64(v))
	}
	m.gpuStranded.Set(float64(u.Stranded))
}

func (m *Metrics) observeQuota(q *admission.Quota) {
	m.quotaUsage.Reset()
	m.quotaNominal.Reset()
	m.quotaBorrowed.Reset()
	for _, name := range q.ClusterQueues() {
		cq, ok := q.ClusterQueue(name)
		if !ok {
			continue
		}
		for _, rg := range cq.ResourceGroups {
			for _, f := range rg.Flavors {
				for _, r := range f.Resources {
					l := []string{name, f.Name, string(r.Name)}
					m.quotaUsage.WithLabelValues(l...).Set(float64(q.Usage(name, f.Name, r.Name)))
					m.quotaNominal.WithLabelValues(l...).Set(float64(q.Nominal(name, f.Name, r.Name)))
					m.quotaBorrowed.WithLabelValues(l...).Set(float64(q.Borrowed(name, f.Name, r.Name)))
				}
			}
		}
	}
}

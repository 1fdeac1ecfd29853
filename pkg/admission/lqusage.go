package admission

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// LocalQueueUsage is admission fair sharing's record (Kueue's AdmissionFairSharing):
// each LocalQueue's usage in milli-GPU-milliseconds (fine enough that frequent ticks
// lose nothing to rounding), decayed with its ClusterQueue's half-life, grown by what
// its admitted workloads hold and by an entry penalty per admission, so one LocalQueue
// does not take every admission between two ticks. Within a ClusterQueue that enables
// it, the LocalQueue with the least usage per weight goes first. Integer math only.
type LocalQueueUsage struct {
	res     *Resolver
	decay   decayTable
	usage   map[string]int64 // "namespace/name" -> milli-GPU-ms
	penalty time.Duration
	lastAt  time.Time
	started bool
}

// NewLocalQueueUsage starts an empty record over the queues r knows; penalty ≤ 0 means
// 5 minutes (Kueue's default entry penalty).
func NewLocalQueueUsage(r *Resolver, penalty time.Duration) *LocalQueueUsage {
	if penalty <= 0 {
		penalty = 5 * time.Minute
	}
	return &LocalQueueUsage{res: r, decay: newDecayTable(), usage: map[string]int64{}, penalty: penalty}
}

// Enabled reports whether the ClusterQueue orders its LocalQueues by usage.
func (u *LocalQueueUsage) Enabled(clusterQueue string) bool {
	cq, ok := u.res.ClusterQueue(clusterQueue)
	return ok && cq.AdmissionFairSharing.Enabled
}

// Tick advances to now: every LocalQueue's usage decays by its ClusterQueue's half-life,
// then grows by what its admitted workloads hold (holding lists them: LocalQueue key
// and milli-GPU) times the time elapsed. The first call only sets the clock.
func (u *LocalQueueUsage) Tick(now time.Time, holding func(add func(localQueue string, milli resources.MilliGPU))) {
	if !u.started {
		u.started, u.lastAt = true, now
		return
	}
	dt := now.Sub(u.lastAt)
	if dt <= 0 {
		return
	}
	u.lastAt = now
	for _, k := range sortedKeys(u.usage) {
		u.usage[k] = u.decay.decay(u.usage[k], dt, u.halfLife(k))
	}
	ms := dt.Milliseconds()
	holding(func(lq string, milli resources.MilliGPU) {
		u.usage[lq] = satAdd(u.usage[lq], mulDiv(int64(milli), ms, 1))
	})
}

// Admitted charges the entry penalty for a workload of milli-GPU admitted from the
// LocalQueue ("namespace/name") of ClusterQueue clusterQueue, if it enables fair sharing.
func (u *LocalQueueUsage) Admitted(clusterQueue, localQueue string, milli resources.MilliGPU) {
	if u.Enabled(clusterQueue) {
		u.usage[localQueue] = satAdd(u.usage[localQueue], mulDiv(int64(milli), u.penalty.Milliseconds(), 1))
	}
}

// Usage is a LocalQueue's decayed usage in milli-GPU-seconds.
func (u *LocalQueueUsage) Usage(localQueue string) int64 { return u.usage[localQueue] / 1000 }

// Weighted is a LocalQueue's usage divided by its fair-sharing weight (1 when unset):
// the key LocalQueues are ordered by.
func (u *LocalQueueUsage) Weighted(localQueue string) int64 {
	w := int64(1000)
	if lq, ok := u.res.LocalQueue(localQueue); ok && lq.FairSharing.WeightMilli > 0 {
		w = lq.FairSharing.WeightMilli
	}
	return mulDiv(u.usage[localQueue], 1000, w)
}

// halfLife is the half-life of the LocalQueue's ClusterQueue (0: no decay).
func (u *LocalQueueUsage) halfLife(localQueue string) time.Duration {
	lq, ok := u.res.LocalQueue(localQueue)
	if !ok {
		return 0
	}
	if cq, ok := u.res.ClusterQueue(lq.ClusterQueue); ok {
		return cq.AdmissionFairSharing.HalfLife
	}
	return 0
}

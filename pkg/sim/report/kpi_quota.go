package report

import "github.com/gantry-sched/gantry/pkg/sim"

// quotaAcc integrates one ClusterQueue's usage.
type quotaAcc struct {
	q              QuotaUse
	last           QuotaPoint
	has            bool
	used, borrowed integral
}

// sampleQuota records the GPU usage, borrowing and nominal quota of the queues sampled
// (all of them at the first sample, then those that may have changed).
func (c *KPICollector) sampleQuota(t sim.Seconds, queues []sim.QueueState) {
	for _, qs := range queues {
		q := c.quota[qs.Name]
		if q == nil {
			q = &quotaAcc{q: QuotaUse{ClusterQueue: qs.Name}}
			c.quota[qs.Name] = q
		}
		p := QuotaPoint{T: t, Used: gpuEquivalentOf(qs.Usage), Borrowed: gpuEquivalentOf(qs.Borrowed), Nominal: gpuEquivalentOf(qs.Nominal)}
		if !q.has || p.Used != q.last.Used || p.Borrowed != q.last.Borrowed || p.Nominal != q.last.Nominal {
			q.q.Points = append(q.q.Points, p)
		}
		q.last, q.has = p, true
		q.used.set(int64(p.Used), c.clock)
		q.borrowed.set(int64(p.Borrowed), c.clock)
		q.q.PeakUsed = max(q.q.PeakUsed, p.Used)
		q.q.PeakBorrowed = max(q.q.PeakBorrowed, p.Borrowed)
		q.q.Nominal = p.Nominal
	}
}

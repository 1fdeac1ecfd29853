package admission

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Manager is the admission layer as the engine uses it: the quota tree, the pending
// queues and the LocalQueues' decayed usage for admission fair sharing. A cycle calls
// Heads, then Assign for each head, FindVictims when the mode is Preempt, asks placement,
// and then Admit (or SetInadmissible); Release when a workload ends. Manager never
// admits on its own.
type Manager struct {
	quota  *Quota
	queues *Queues
	usage  *LocalQueueUsage // admission fair sharing
}

// NewManager builds the quota tree and queues from the loaded objects and enqueues
// nothing: the engine adds workloads as they are submitted.
func NewManager(objs *api.Objects, opts Options) (*Manager, error) {
	quota, err := NewQuota(objs, opts)
	if err != nil {
		return nil, err
	}
	queues, err := newQueues(quota.s, objs)
	if err != nil {
		return nil, err
	}
	return &Manager{quota: quota, queues: queues, usage: NewLocalQueueUsage(queues.res, opts.AdmissionPenalty)}, nil
}

// SetResourceGroups applies a quota change (a QuotaChange event) to ClusterQueue cq: the
// tree is rebuilt with the new groups, admitted workloads keep their usage (none is
// evicted, even above a lowered quota), and every inadmissible workload is requeued.
// On error nothing changes.
func (m *Manager) SetResourceGroups(cq string, groups []api.ResourceGroup) error {
	quota, err := m.quota.WithResourceGroups(cq, groups)
	if err != nil {
		return err
	}
	m.quota = quota
	m.queues.rebind(quota.s)
	m.queues.Requeue(RequeueEvent{Reason: QuotaChanged})
	return nil
}

// Quota returns the live quota tree (Clone it for what-ifs).
func (m *Manager) Quota() *Quota { return m.quota }

// Queues returns the pending queues.
func (m *Manager) Queues() *Queues { return m.queues }

// Add enqueues a submitted workload.
func (m *Manager) Add(wl *api.Workload) (Status, error) { return m.queues.Add(wl) }

// Heads returns the head of every ClusterQueue that may admit now, ordered for the
// cycle: with fair sharing by the ClusterQueue's share (lowest first), then by
// priority, then by age, then by name.
func (m *Manager) Heads() []Head {
	heads := m.queues.heads(m.usage.Weighted)
	fair := m.quota.s.fair.Enabled
	if fair {
		for i := range heads {
			heads[i].Share = m.quota.Share(heads[i].ClusterQueue)
		}
	}
	slices.SortFunc(heads, func(a, b Head) int {
		if fair && a.Share != b.Share {
			return cmp.Compare(a.Share, b.Share)
		}
		// before(), unrolled on cached integers: this sort runs over every queue.
		if a.Workload.Priority != b.Workload.Priority {
			return cmp.Compare(b.Workload.Priority, a.Workload.Priority)
		}
		if a.created != b.created {
			return cmp.Compare(a.created, b.created)
		}
		if c := cmp.Compare(a.Workload.Namespace, b.Workload.Namespace); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Workload.Name, b.Workload.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.ClusterQueue, b.ClusterQueue)
	})
	return heads
}

// Assign rates wl in the ClusterQueue its LocalQueue points at. Queue problems come
// back as a NoFit assignment with their reason code.
func (m *Manager) Assign(wl *api.Workload) Assignment {
	if wl == nil {
		return Assignment{Code: InvalidWorkload, Message: "nil workload"}
	}
	_, cq, code, msg := m.queues.resolve(wl)
	if code != ReasonNone {
		a := Assignment{Workload: wl.ID(), Code: code, Message: msg}
		if cq != nil {
			a.ClusterQueue = cq.cq.Name
		}
		return a
	}
	if held(cq.cq.StopPolicy) || held(m.queues.lqs[wl.Namespace+"/"+wl.Queue].StopPolicy) {
		return Assignment{Workload: wl.ID(), ClusterQueue: cq.cq.Name, Code: QueueHeld, Message: "the queue is held by its stopPolicy"}
	}
	return m.quota.Assign(wl, cq.cq.Name)
}

// FindVictims is Quota.FindVictims on the live tree.
func (m *Manager) FindVictims(wl *api.Workload, a Assignment, protected func(api.WorkloadID) bool) PreemptionResult {
	return m.quota.FindVictims(wl, a, protected)
}

// Admit records an admission the engine has confirmed with placement and removes the
// workload from the queues.
func (m *Manager) Admit(wl *api.Workload, a Assignment) error {
	if err := m.quota.Admit(wl, a); err != nil {
		return err
	}
	m.queues.Remove(wl.ID())
	m.usage.Admitted(a.ClusterQueue, wl.Namespace+"/"+wl.Queue, a.GPUMilli)
	return nil
}

// Release frees an admitted workload's quota (finished, evicted, preempted) and wakes
// the inadmissible workloads of its cohort tree, which may fit now.
func (m *Manager) Release(id api.WorkloadID) error {
	rec, ok := m.quota.Admitted(id)
	if !ok {
		return fmt.Errorf("workload %s: not admitted", id)
	}
	if err := m.quota.Release(id); err != nil {
		return err
	}
	m.queues.Requeue(RequeueEvent{Reason: CapacityFreed, ClusterQueue: rec.ClusterQueue})
	return nil
}

// SetInadmissible records why a head was not admitted (see Queues.SetInadmissible).
func (m *Manager) SetInadmissible(id api.WorkloadID, code ReasonCode, message string) bool {
	return m.queues.SetInadmissible(id, code, message)
}

// Requeue wakes inadmissible workloads after a change (see Queues.Requeue).
func (m *Manager) Requeue(ev RequeueEvent) int { return m.queues.Requeue(ev) }

// Status reports a pending workload's queue status.
func (m *Manager) Status(id api.WorkloadID) (Status, bool) { return m.queues.Status(id) }

// Delete removes a workload that is no longer wanted: pending ones leave the queues,
// admitted ones release their quota.
func (m *Manager) Delete(id api.WorkloadID) {
	if m.queues.Remove(id) {
		return
	}
	_ = m.Release(id) // not admitted either: nothing to do
}

// ToDrain lists admitted workloads of HoldAndDrain queues, which the engine evicts.
func (m *Manager) ToDrain() []api.WorkloadID {
	var out []api.WorkloadID
	for _, w := range m.quota.AdmittedWorkloads() {
		c := m.queues.cqs[w.ClusterQueue]
		lq := m.queues.lqs[w.LocalQueue]
		if c.cq.StopPolicy == api.StopHoldAndDrain || (lq != nil && lq.StopPolicy == api.StopHoldAndDrain) {
			out = append(out, w.ID)
		}
	}
	return out
}

// Tick advances admission fair sharing to now (LocalQueueUsage.Tick): usage decays and
// grows by the admitted workloads. The engine calls it with its injected clock.
func (m *Manager) Tick(now time.Time) {
	m.usage.Tick(now, func(add func(string, resources.MilliGPU)) {
		for _, w := range m.quota.AdmittedWorkloads() {
			add(w.LocalQueue, w.GPUMilli)
		}
	})
}

// LocalQueueUsage is a LocalQueue's decayed usage in milli-GPU-seconds.
func (m *Manager) LocalQueueUsage(lqKey string) int64 { return m.usage.Usage(lqKey) }

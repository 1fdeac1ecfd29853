package sim

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Controller restarts in TestInvariantsProperty. A restart throws the simulator's
// engine.Scheduler away (it is the controller's memory) and builds a new one from what
// a restarted controller reads back from the API server, the way pkg/controller does on
// start (sched.go ensureScheduler, feed.go sync, restore.go readRestored and apply):
//
//   - engine.Build from the current queue objects, with the unfinished workloads as the
//     fragmentation scorer's shapes;
//   - every submitted, unfinished workload submitted again, in ID order, at the time it
//     (re-)entered its queue with its remaining run time, and started again at its
//     admission time when it holds its gang;
//   - what the controller records in annotations and no replay gives back: who last
//     preempted each workload (gantry.dev/preempted-by), a pending preemptor's victims
//     (gantry.dev/nominated-victims, joined with the victims still leaving for it), the
//     preemption history within the longest disruption-budget window
//     (gantry.dev/preemption-history), and a pending workload's reservation
//     (gantry.dev/reservation: its node names and device IDs, parsed against the nodes
//     as they are now; one on a node or device that is gone is dropped).
//
// The simulator reports notices to its scheduler (Noticed) where the controller hands
// its victims in as World.InFlight, so a victim still leaving (gantry.dev/preemption-
// notice) has its notice replayed: that puts it back in flight; the records restore
// everything else a notice set, once each.
//
// The simulator's model (nodes, bound pods and their devices, admitted quota, the
// workloads' phases and pending events) stands for the API server and the cluster: a
// restart leaves it as it is. So the simulator needs no restart entry point: the test
// replaces Simulator.sched (restartScheduler) and runs the new scheduler's first pass.

// restartRecords are the annotations the controller writes on Workload objects
// (pkg/controller commit.go, nominated.go, persist.go), kept from the simulator's event
// records as the controller writes them. It watches a run from its first event as an
// Observer, with or without the invariant checker.
type restartRecords struct {
	s *Simulator
	// preemptedBy is gantry.dev/preempted-by: set by each preemption notice, kept until
	// the workload finishes.
	preemptedBy map[api.WorkloadID]api.WorkloadID
	// nominated is gantry.dev/nominated-victims: the victims noticed for a preemptor
	// while it is pending, cleared when it is admitted or finishes.
	nominated map[api.WorkloadID][]api.WorkloadID
	// notice is gantry.dev/preemption-notice, with the preemption's record: set while a
	// victim leaves, until it is evicted or finishes.
	notice map[api.WorkloadID]placement.PreemptionRecord
	// history is gantry.dev/preemption-history: each workload's newest preemptions,
	// kept after it finishes (budgets count disruptions, whatever became of them).
	history map[api.WorkloadID][]placement.PreemptionRecord
	// notices counts the preemption notices so far (a restart may wait for one).
	notices int
}

// maxHistoryRecords is the controller's bound on a workload's history annotation.
const maxHistoryRecords = 16

func newRestartRecords() *restartRecords {
	return &restartRecords{preemptedBy: map[api.WorkloadID]api.WorkloadID{}, nominated: map[api.WorkloadID][]api.WorkloadID{},
		notice: map[api.WorkloadID]placement.PreemptionRecord{}, history: map[api.WorkloadID][]placement.PreemptionRecord{}}
}

func (a *restartRecords) observer() Observer { return ObserverFuncs{Event: a.onEvent} }

// onEvent writes what the controller writes: a preemption notice annotates the victim
// and adds it to its preemptor's victims while the preemptor is pending; an admission
// clears the workload's wait, an eviction its notice, a finish all but its history.
func (a *restartRecords) onEvent(r EventRecord) {
	id := api.WorkloadID(r.Workload)
	switch r.Event {
	case EvPreempted:
		a.notices++
		rec := placement.PreemptionRecord{Workload: id, Queue: r.ClusterQueue, At: a.s.clock(), GPUMilli: r.GPUMilli}
		a.notice[id] = rec
		if r.By == "" {
			return
		}
		by := api.WorkloadID(r.By)
		a.preemptedBy[id] = by
		h := append(a.history[id], rec)
		a.history[id] = h[max(0, len(h)-maxHistoryRecords):]
		if p := a.s.wls[by]; p != nil && p.submitted && p.phase == plan.Pending {
			a.nominated[by] = appendID(a.nominated[by], id)
		}
	case EvAdmitted:
		delete(a.nominated, id)
	case EvEvicted:
		delete(a.notice, id)
	case EvFinished:
		delete(a.preemptedBy, id)
		delete(a.nominated, id)
		delete(a.notice, id)
	}
}

// restoredState is what a restart hands the new scheduler beyond the workloads.
type restoredState struct {
	leaving      map[api.WorkloadID]placement.PreemptionRecord // notices replayed
	preemptedBy  map[api.WorkloadID]api.WorkloadID
	nominated    map[api.WorkloadID][]api.WorkloadID
	history      []placement.PreemptionRecord
	reservations map[api.WorkloadID]plan.Reservation
	// dropped are the reservations whose record does not parse on the nodes now.
	dropped map[api.WorkloadID]error
}

// reservationRecord is gantry.dev/reservation: the ETA, the running workloads waited
// for and each planned pod's node and device IDs (the requests are the pod sets').
type reservationRecord struct {
	eta   time.Time
	waits []api.WorkloadID
	pods  []reservedPodRecord
}

type reservedPodRecord struct {
	podSet  string
	index   int
	node    string
	devices []string
}

// formatReservation is the record the controller's committer writes for every
// reservation of a plan (and removes at the workload's next rejection or admission).
func formatReservation(r plan.Reservation) reservationRecord {
	rec := reservationRecord{eta: r.ETA.UTC(), waits: slices.Clone(r.Waits)}
	for _, p := range r.Pods {
		rec.pods = append(rec.pods, reservedPodRecord{podSet: p.Ref.PodSet, index: p.Ref.Index, node: p.Node, devices: p.Devices.IDs()})
	}
	return rec
}

// parseReservation rebuilds w's reservation from its record on the nodes now, as the
// controller's parseReservation does: a pod on a node that is gone, or a device ID the
// node does not have (now), is an error, and the engine plans afresh.
func (s *Simulator) parseReservation(w *api.Workload, rec reservationRecord) (plan.Reservation, error) {
	requests := map[string]resources.Vector{}
	for _, ps := range w.PodSets {
		requests[ps.Name] = ps.Requests
	}
	r := plan.Reservation{Workload: w.ID(), ETA: rec.eta, Waits: rec.waits}
	nodes := map[string]bool{}
	for _, p := range rec.pods {
		i, ok := s.snap.NodeIndex(p.node)
		if !ok {
			return plan.Reservation{}, fmt.Errorf("reservation on unknown node %s", p.node)
		}
		a, err := devices.AssignmentFromIDs(s.snap.Devices(i), p.devices)
		if err != nil {
			return plan.Reservation{}, fmt.Errorf("reservation on node %s: %w", p.node, err)
		}
		r.Pods = append(r.Pods, cluster.BoundPod{Ref: cluster.PodRef{Workload: w.ID(), PodSet: p.podSet, Index: p.index},
			Node: p.node, Requests: requests[p.podSet], Devices: a})
		nodes[p.node] = true
	}
	r.Nodes = invSortedKeys(nodes)
	return r, nil
}

// readRestored gathers what the controller reads back on start (its readRestored): the
// records of the unfinished workloads, the victims still leaving, the history within
// the longest disruption-budget window (none without budgets) and the pending
// workloads' reservations. A reservation's record is the scheduler's current
// reservation, formatted: the controller's committer writes every reservation it
// commits and removes it where the scheduler drops it (the event log, which the other
// records are kept from, shows a reservation without its devices).
func (a *restartRecords) readRestored() restoredState {
	s := a.s
	r := restoredState{leaving: map[api.WorkloadID]placement.PreemptionRecord{}, preemptedBy: map[api.WorkloadID]api.WorkloadID{},
		nominated: map[api.WorkloadID][]api.WorkloadID{}, reservations: map[api.WorkloadID]plan.Reservation{},
		dropped: map[api.WorkloadID]error{}}
	since, budgets := historySince(s.cqs, s.clock())
	for _, id := range s.order {
		st := s.wls[id]
		if budgets {
			for _, rec := range a.history[id] {
				if !rec.At.Before(since) {
					r.history = append(r.history, rec)
				}
			}
		}
		if !st.submitted || st.phase == plan.Finished {
			continue // no object yet, or no longer scheduled
		}
		if by, ok := a.preemptedBy[id]; ok {
			r.preemptedBy[id] = by
		}
		if holdsPods(st.phase) {
			if rec, ok := a.notice[id]; ok {
				r.leaving[id] = rec
			}
			continue
		}
		if len(a.nominated[id]) > 0 {
			r.nominated[id] = slices.Clone(a.nominated[id])
		}
		if res, ok := s.sched.Reservation(id); ok {
			got, err := s.parseReservation(st.w, formatReservation(res))
			if err != nil {
				r.dropped[id] = err
				continue
			}
			r.reservations[id] = got
		}
	}
	// A victim still leaving is part of its pending preemptor's wait, even where the
	// preemptor's own record missed it.
	for _, v := range sortedIDKeys(r.leaving) {
		by := r.preemptedBy[v]
		if p := s.wls[by]; p != nil && p.submitted && p.phase == plan.Pending {
			r.nominated[by] = appendID(r.nominated[by], v)
		}
	}
	return r
}

// historySince is the time from which preemptions count against some disruption
// budget (all of them for a budget without a window), and false when no ClusterQueue
// has a budget: then no history is restored.
func historySince(cqs map[string]*api.ClusterQueue, now time.Time) (time.Time, bool) {
	var longest time.Duration
	budgets := false
	for _, cq := range cqs {
		b := cq.DisruptionBudget
		if b.MaxGPUs <= 0 {
			continue
		}
		if b.Window <= 0 {
			return time.Time{}, true
		}
		budgets, longest = true, max(longest, b.Window)
	}
	return now.Add(-longest), budgets
}

// restoreFault breaks a restart on purpose, to show the checks catch a broken restore
// (TestRestartChecksCatchBrokenRestores); the property runs restart without one.
type restoreFault int

const (
	noFault             restoreFault = iota
	faultNotStarted                  // running workloads are submitted but not started
	faultFirstLost                   // the first unfinished workload is not submitted
	faultNoReservations              // no reservation is restored
)

// rebuildScheduler builds a new scheduler from the queue objects, the unfinished
// workloads and r, as the controller's first pass does.
func (s *Simulator) rebuildScheduler(r restoredState, fault restoreFault) (*engine.Scheduler, error) {
	objs := *s.objs // the ClusterQueues as quota changes left them (s.cqs points into them)
	objs.Workloads = nil
	for id := range s.live.all() {
		objs.Workloads = append(objs.Workloads, *s.wls[id].w)
	}
	ns, err := engine.Build(&objs, s.opts.Policy)
	if err != nil {
		return nil, fmt.Errorf("restart: %w", err)
	}
	i := -1
	for id := range s.live.all() {
		if i++; i == 0 && fault == faultFirstLost {
			continue
		}
		st := s.wls[id]
		if err := ns.Submit(st.w, Epoch().Add(st.queuedAt), st.remaining()); err != nil {
			return nil, fmt.Errorf("restart: %w", err)
		}
		if holdsPods(st.phase) && fault != faultNotStarted {
			ns.Started(id, Epoch().Add(st.startedAt))
		}
	}
	// A notice is replayed without its preemptor: who the victim leaves for and the
	// preemptor's wait are restored from their records below, the history by
	// RestoreHistory (which replaces what the replays added).
	for _, id := range sortedIDKeys(r.leaving) {
		ns.Noticed(id, "", r.leaving[id])
	}
	for _, id := range sortedIDKeys(r.preemptedBy) {
		ns.RestorePreemptedBy(id, r.preemptedBy[id])
	}
	for _, id := range sortedIDKeys(r.nominated) {
		ns.RestoreNominated(id, r.nominated[id])
	}
	ns.RestoreHistory(r.history)
	for _, id := range sortedIDKeys(r.reservations) {
		if fault != faultNoReservations {
			ns.RestoreReservation(id, r.reservations[id])
		}
	}
	return ns, nil
}

// restartScheduler replaces s's scheduler with one rebuilt from the records, as a
// restarted controller builds its own, and returns what it restored and the scheduler
// it replaced. The caller runs the new scheduler's first pass.
func restartScheduler(s *Simulator, a *restartRecords, fault restoreFault) (restoredState, *engine.Scheduler, error) {
	r := a.readRestored()
	ns, err := s.rebuildScheduler(r, fault)
	if err != nil {
		return r, nil, err
	}
	old := s.sched
	s.sched = ns
	return r, old, nil
}

// ---- runs with restarts ----

// restartMode is what a run does at its world's restarts.
type restartMode int

const (
	// restartController rebuilds the scheduler (restartScheduler), then runs a pass.
	restartController restartMode = iota
	// passInstead only runs a pass: cycles at that instant, as if something changed.
	passInstead
)

// invSim is one run of a world: the simulator, the controller's records, the checker
// (nil for the unchecked runs) and what the restarts did.
type invSim struct {
	s    *Simulator
	rec  *restartRecords
	chk  *invariantChecker
	mode restartMode
	// fault breaks the restarts (mutation tests only).
	fault restoreFault
	// cycles are those of the schedulers restarts replaced.
	cycles   int64
	restarts int
	restored restoreCounts
}

// run simulates to w's horizon with its restarts. While a restart waits for a
// preemption notice, the run goes one instant at a time (every event is at a whole
// minute: the instant at 0 is run with the first minute's) and places the restart once
// the notice was given.
func (r *invSim) run(w invWorld) error {
	s := r.s
	var timed []time.Duration
	var onNotice []invRestart
	for _, rs := range w.restarts {
		if rs.afterNotice > 0 {
			onNotice = append(onNotice, rs)
		} else {
			timed = append(timed, rs.at)
		}
	}
	slices.Sort(timed)
	slices.SortStableFunc(onNotice, func(a, b invRestart) int { return a.afterNotice - b.afterNotice })
	// restartUntil restarts at every timed restart up to t, in order.
	restartUntil := func(t time.Duration) error {
		for len(timed) > 0 && timed[0] <= t {
			if timed[0] > s.now {
				if err := s.RunUntil(timed[0]); err != nil {
					return err
				}
			}
			timed = timed[1:]
			if err := r.restart(); err != nil {
				return err
			}
		}
		return nil
	}
	for len(onNotice) > 0 {
		ev, ok := s.queue.peek()
		if !ok || ev.at > w.until {
			break
		}
		at := max(ev.at, time.Minute)
		if err := restartUntil(at - 1); err != nil {
			return err
		}
		if err := s.RunUntil(at); err != nil {
			return err
		}
		for len(onNotice) > 0 && onNotice[0].afterNotice <= r.rec.notices {
			timed = append(timed, s.now+onNotice[0].delay)
			onNotice = onNotice[1:]
		}
		slices.Sort(timed)
		if err := restartUntil(s.now); err != nil {
			return err
		}
	}
	if err := restartUntil(w.until); err != nil {
		return err
	}
	return s.RunUntil(w.until)
}

// restart restarts the controller now (or only runs a pass, as r's mode says) and
// runs the new scheduler's first pass: a controller's first pass tries every pending
// workload.
func (r *invSim) restart() error {
	s, chk := r.s, r.chk
	if r.mode == passInstead {
		s.dirty = true
		return s.settle()
	}
	restored, old, err := restartScheduler(s, r.rec, r.fault)
	if err != nil {
		return err
	}
	cycles, _ := old.Stats()
	r.cycles += cycles
	r.restarts++
	r.restored.add(restored.counts(s))
	if chk != nil && chk.err == nil {
		chk.fail(chk.checkRestored(old, restored))
	}
	s.dirty = true
	if err := s.settle(); err != nil {
		return err
	}
	if chk != nil && chk.err == nil {
		chk.fail(chk.checkAfterRestart())
	}
	return nil
}

// counts says what a restart restored.
func (r restoredState) counts(s *Simulator) restoreCounts {
	c := restoreCounts{leaving: len(r.leaving), waits: len(r.nominated), reservations: len(r.reservations),
		dropped: len(r.dropped), history: len(r.history)}
	for id := range s.live.all() {
		if holdsPods(s.wls[id].phase) {
			c.running++
		} else {
			c.pending++
		}
	}
	return c
}

// restartsText lists a world's restarts for messages.
func restartsText(rs []invRestart) string {
	if len(rs) == 0 {
		return "none"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

// ---- checks of a restart ----

// checkRestored runs right after a restart, before the new scheduler's first cycle:
//   - the new scheduler knows exactly the submitted, unfinished workloads, each by the
//     model the simulator has: none is lost, none that finished comes back;
//   - the records restore the replaced scheduler's state: each pending workload's wait
//     and reservation (unless its node or device is gone) are the ones it held;
//   - the new scheduler holds what was restored: the waits, the history and each
//     reservation (RestoreReservation takes one only for a workload it holds pending).
func (c *invariantChecker) checkRestored(old *engine.Scheduler, r restoredState) error {
	s := c.s
	for _, id := range s.order {
		st := s.wls[id]
		live := st.submitted && st.phase != plan.Finished
		switch w := s.sched.Workload(id); {
		case live && w == nil:
			return fmt.Errorf("restart: %s workload %s is lost: the rebuilt scheduler does not know it", st.phase, id)
		case !live && w != nil:
			return fmt.Errorf("restart: the rebuilt scheduler knows %s, which is %s (submitted=%v)", id, st.phase, st.submitted)
		case live && w != st.w:
			return fmt.Errorf("restart: the rebuilt scheduler knows %s by another model", id)
		}
		if !live || holdsPods(st.phase) {
			continue
		}
		if err := restoredPending(id, old, s.sched, r); err != nil {
			return fmt.Errorf("restart: %w", err)
		}
	}
	want := slices.Clone(r.history)
	sort.SliceStable(want, func(i, j int) bool { // oldest first, ties by workload (RestoreHistory)
		if !want[i].At.Equal(want[j].At) {
			return want[i].At.Before(want[j].At)
		}
		return want[i].Workload < want[j].Workload
	})
	if got := s.sched.History(); !slices.Equal(got, want) {
		return fmt.Errorf("restart: the rebuilt scheduler's history has %d records, %d were restored", len(got), len(want))
	}
	return nil
}

// restoredPending checks one pending workload's wait and reservation across a restart
// from old to now.
func restoredPending(id api.WorkloadID, old, now *engine.Scheduler, r restoredState) error {
	if got, want := sortedWorkloadIDs(r.nominated[id]), sortedWorkloadIDs(old.Nominated(id)); !slices.Equal(got, want) {
		return fmt.Errorf("the records say pending %s waits for %v, the replaced scheduler for %v", id, got, want)
	}
	if got, want := now.Nominated(id), r.nominated[id]; !slices.Equal(got, want) {
		return fmt.Errorf("pending %s waits for %v in the rebuilt scheduler, %v was restored", id, got, want)
	}
	had, held := old.Reservation(id)
	restored, ok := r.reservations[id]
	if _, gone := r.dropped[id]; gone || (!held && !ok) {
		return nil
	}
	if !held || !ok || !sameReservationRecord(had, restored) {
		return fmt.Errorf("pending %s's reservation was %+v (held=%v), its record restores %+v (ok=%v)", id, had, held, restored, ok)
	}
	got, ok := now.Reservation(id)
	if !ok {
		return fmt.Errorf("pending %s's reservation was not taken: the rebuilt scheduler does not hold it pending", id)
	}
	if !sameReservationRecord(got, restored) {
		return fmt.Errorf("pending %s's reservation is %+v in the rebuilt scheduler, %+v was restored", id, got, restored)
	}
	return nil
}

// checkAfterRestart runs after the new scheduler's first pass (all cycles at the
// restart's instant). The new scheduler tried every pending workload, so each one it
// holds pending has a decision, a rejection or a reservation, unless it was admitted:
// a pending workload without one fell out of its queue. A running or noticed workload
// with one is pending to the scheduler: it would be admitted twice.
func (c *invariantChecker) checkAfterRestart() error {
	s := c.s
	for id := range s.live.all() {
		st := s.wls[id]
		_, rejected := s.sched.LastRejection(id)
		_, reserved := s.sched.Reservation(id)
		switch {
		case st.phase == plan.Pending && !rejected && !reserved:
			return fmt.Errorf("restart: pending workload %s got no decision in the rebuilt scheduler's first pass: lost from its queue", id)
		case holdsPods(st.phase) && (rejected || reserved):
			return fmt.Errorf("restart: %s workload %s is pending to the rebuilt scheduler (rejected=%v, reserved=%v)", st.phase, id, rejected, reserved)
		}
	}
	return nil
}

// sameReservationRecord compares what a reservation record keeps (not the reason).
func sameReservationRecord(a, b plan.Reservation) bool {
	return a.HoldsSame(b) && slices.Equal(a.Waits, b.Waits)
}

// appendID appends id unless ids holds it already.
func appendID(ids []api.WorkloadID, id api.WorkloadID) []api.WorkloadID {
	if slices.Contains(ids, id) {
		return ids
	}
	return append(ids, id)
}

// sortedIDKeys are a map's workload IDs, sorted.
func sortedIDKeys[V any](m map[api.WorkloadID]V) []api.WorkloadID {
	out := make([]api.WorkloadID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	return sortedWorkloadIDs(out)
}

// sortedWorkloadIDs is ids sorted, each once.
func sortedWorkloadIDs(ids []api.WorkloadID) []api.WorkloadID {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

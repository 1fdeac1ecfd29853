package sim

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

// Epoch is the wall-clock time the simulation's t=0 maps to on the engine's clock. It is
// fixed so runs are reproducible.
func Epoch() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// Options configure a simulation.
type Options struct {
	// Until stops the simulation at this time; 0 runs until no event is left.
	Until time.Duration
	// Policy is the scheduling policy (its Seed makes runs reproducible); the engine
	// itself is built from the objects by engine.Build, as the controller builds it.
	Policy engine.Policy
	// Observers see every event record and state sample (KPIs, report, progress).
	Observers []Observer
	// MaxCyclesPerInstant guards against a cycle storm at one instant (0 = 64).
	MaxCyclesPerInstant int
	// KeepLog keeps every event record in memory for Log (tests, small runs). Off, the
	// records only go to the Observers: a fleet-size run makes millions of them.
	KeepLog bool
	// PodsReady is the pod start delay and Kueue's waitForPodsReady (podsready.go).
	PodsReady PodsReady
}

// Simulator runs the engine over a modelled cluster. Not safe for concurrent use.
type Simulator struct {
	objs   *api.Objects
	opts   Options
	sched  *engine.Scheduler
	now    time.Duration
	queue  eventQueue
	wakeAt time.Duration // the backoff wake queued last (scheduleWake)
	// views are the running workloads' views, kept as they start and stop (cycle.go).
	views runningCache
	// validator checks each cycle's plan, keeping its memory between them.
	validator plan.Validator
	snap      *cluster.Snapshot
	specs     map[string]cluster.Node // every node ever known, by name (for recover/return)
	offline   map[string]string       // node -> why it is out of the snapshot
	cordon    map[string]bool         // nodes under spot notice: no new pods
	quota     *admission.Quota
	wls       map[api.WorkloadID]*wlState
	order     []api.WorkloadID // workload IDs sorted, for deterministic iteration
	live      liveList         // submitted, unfinished workloads, sorted (live.go)
	neverFit  neverFitState    // workloads that can never run on the cluster (neverfits.go)
	cqs       map[string]*api.ClusterQueue
	log       []EventRecord
	dirty     bool
	chg       changes                 // what moved since the last sample, for DeltaObservers (changes.go)
	claims    *placement.DeviceClaims // compiled DRA claims, for shared claims (dra_shared.go)
	// readyDelays are the nodes' pod ready delays; unready counts the runs whose pods
	// are not all Ready yet (podsready.go).
	readyDelays podReadyDelays
	unready     int
	// prov runs Kueue's ProvisioningRequest admission checks and the autoscaler behind
	// them (provision*.go).
	prov *provisioner
}

// New validates the objects and builds the initial cluster, quota and event queue.
func New(objs *api.Objects, opts Options) (*Simulator, error) {
	if objs == nil {
		return nil, fmt.Errorf("simulate: no objects")
	}
	if opts.Until < 0 {
		return nil, fmt.Errorf("simulate: until %s: must not be negative", opts.Until)
	}
	// Quota changes rewrite ClusterQueues: work on a copy so the caller's objects stay as given.
	own := *objs
	own.ClusterQueues = append([]api.ClusterQueue(nil), objs.ClusterQueues...)
	objs = &own
	if opts.PodsReady.Config == nil {
		// A Kueue Configuration among the inputs: explain, get and every driver that
		// passes no setting of its own run the same simulation as simulate.
		opts.PodsReady.Config = objs.PodsReady
	}
	if err := opts.PodsReady.Validate(); err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	delays, err := readPodReadyDelays(objs)
	if err != nil {
		return nil, err
	}
	sched, err := engine.Build(objs, opts.Policy)
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	s := &Simulator{
		objs: objs, opts: opts, sched: sched,
		specs: map[string]cluster.Node{}, offline: map[string]string{}, cordon: map[string]bool{},
		wls: map[api.WorkloadID]*wlState{}, cqs: map[string]*api.ClusterQueue{}, readyDelays: delays,
	}
	if s.opts.MaxCyclesPerInstant <= 0 {
		s.opts.MaxCyclesPerInstant = 64
	}
	s.trackChanges()
	if err := s.buildCluster(); err != nil {
		return nil, err
	}
	if s.quota, err = admission.NewQuota(objs, admission.Options{}); err != nil {
		return nil, fmt.Errorf("simulate: quota: %w", err)
	}
	if s.prov, err = newProvisioner(objs); err != nil {
		return nil, err
	}
	if err := s.buildWorkloads(); err != nil {
		return nil, err
	}
	if err := s.startLive(); err != nil { // a cluster dump's running pods (livestart.go)
		return nil, err
	}
	s.scheduleClusterEvents()
	return s, nil
}

// buildCluster expands node pools and reads v1 Nodes into the first snapshot.
func (s *Simulator) buildCluster() error {
	nodes, err := cluster.NodesOf(s.objs) // node pools, v1 Nodes, GPUs of ResourceSlices
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	for _, n := range nodes {
		s.specs[n.Name] = n
	}
	snap, err := cluster.NewSnapshot(nodes, s.objs.Topologies)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	s.snap = snap
	return nil
}

// buildWorkloads resolves queues and schedules every arrival but those of the workloads
// that run already.
func (s *Simulator) buildWorkloads() error {
	for i := range s.objs.ClusterQueues {
		cq := &s.objs.ClusterQueues[i]
		s.cqs[cq.Name] = cq
	}
	live := liveWorkloads(s.objs)
	for i := range s.objs.Workloads {
		w := &s.objs.Workloads[i]
		id := w.ID()
		if _, dup := s.wls[id]; dup {
			return fmt.Errorf("simulate: workload %s (%s): defined twice", id, w.Source)
		}
		st := &wlState{id: id, w: w, phase: plan.Pending, clusterQueue: s.sched.Resolve(w).ClusterQueue, gpuMilli: workloadMilli(w), viewAt: -1}
		s.wls[id] = st
		s.order = append(s.order, id)
		if !live[id] { // one that runs already starts bound at t=0 (startLive)
			s.queue.schedule(simEvent{at: w.Timing.SubmitAt, kind: kArrival, wl: id})
		}
	}
	sort.Slice(s.order, func(i, j int) bool { return s.order[i] < s.order[j] })
	return nil
}

// Now is the current simulated time.
func (s *Simulator) Now() time.Duration { return s.now }

// Log returns the event log so far (read-only); empty unless Options.KeepLog.
func (s *Simulator) Log() []EventRecord { return s.log }

// Run advances the simulation to Options.Until (or until no event is left).
func (s *Simulator) Run() error { return s.RunUntil(s.opts.Until) }

// RunUntil processes every event at or before t (t = 0: all events), running a cycle at
// each instant where something changed.
func (s *Simulator) RunUntil(t time.Duration) error {
	for {
		ev, ok := s.queue.peek()
		if !ok || (t > 0 && ev.at > t) {
			break
		}
		s.now = ev.at
		for {
			e, ok := s.queue.peek()
			if !ok || e.at != s.now {
				break
			}
			if err := s.handle(s.queue.next()); err != nil {
				return err
			}
		}
		if err := s.settle(); err != nil {
			return err
		}
	}
	if t > s.now {
		s.now = t
	}
	s.sample()
	return nil
}

// settle runs cycles at the current instant while something changed.
func (s *Simulator) settle() error {
	for i := 0; s.dirty && i < s.opts.MaxCyclesPerInstant; i++ {
		s.dirty = false
		if err := s.runCycle(); err != nil {
			return err
		}
	}
	s.scheduleWake()
	s.sample()
	return nil
}

// scheduleWake queues a cycle for when the scheduler's next backoff ends: no other
// event may come by then.
func (s *Simulator) scheduleWake() {
	next, ok := s.sched.NextWake()
	if !ok {
		return
	}
	at := next.Sub(Epoch())
	if at <= s.now || at == s.wakeAt {
		return
	}
	s.wakeAt = at
	s.queue.schedule(simEvent{at: at, kind: kWake})
}

func (s *Simulator) emit(r EventRecord) {
	r.T = Seconds(s.now)
	if s.opts.KeepLog {
		s.log = append(s.log, r)
	}
	for _, o := range s.opts.Observers {
		if f, ok := o.(EventFilter); !ok || f.WantsEvent(r.Event) {
			o.OnEvent(r)
		}
	}
}

// wants reports whether an event of this kind is read by anyone: the kept log or an
// observer (one without an EventFilter reads every kind).
func (s *Simulator) wants(kind EventKind) bool {
	if s.opts.KeepLog {
		return true
	}
	for _, o := range s.opts.Observers {
		if f, ok := o.(EventFilter); !ok || f.WantsEvent(kind) {
			return true
		}
	}
	return false
}

func (s *Simulator) clock() time.Time { return Epoch().Add(s.now) }

// SchedulerStats are the scheduler's counters: cycles run and pending workloads handed
// to them (what parking and the equivalence classes save), for benchmarks.
func (s *Simulator) SchedulerStats() (cycles, considered int64) { return s.sched.Stats() }

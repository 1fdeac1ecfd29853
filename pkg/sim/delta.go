package sim

// StateDelta is what may have changed in the cluster state since the previous sample.
// The first delta of a run carries the whole state (every node, every ClusterQueue, every
// pending pod set); applying each delta in turn to the previous state gives the state
// that State would return at that sample. An entry may repeat an unchanged value.
type StateDelta struct {
	T Seconds
	// Nodes are the rows of the nodes that may have changed, by name, each name's rows
	// replacing all of that name's earlier rows. A node never leaves the state: one
	// taken out of the cluster stays, not ready and without GPUs.
	Nodes []NodeState
	// Queues are the ClusterQueues that may have changed, by name.
	Queues []QueueState
	// Pending are the pod sets of workloads that became pending, by workload, and
	// Resolved the workloads (by name) that stopped being pending.
	Pending  []PendingShape
	Resolved []string
}

// DeltaObserver is an Observer that follows the state through deltas: the simulator calls
// OnDelta instead of OnSample, so a sample costs what changed at that instant instead of
// a view of the whole cluster and queue. Observers must not modify what they receive;
// the simulator never writes it again, so they may keep it.
type DeltaObserver interface {
	Observer
	OnDelta(StateDelta)
}

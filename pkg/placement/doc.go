// Package placement owns the second layer of Gantry: can every pod of an admitted
// workload land at once, and exactly where, down to the GPU index or MIG slot?
//
// It holds per-node feasibility with a reason for every rejection (Rejection, counted
// per dimension in a Diagnosis), all-or-nothing gang placement over all pod sets
// (PlaceWorkload), topology-aware domain choice (Kueue required/preferred/slice
// topology, Volcano hard/soft networkTopology), pure integer scoring functions
// (binpack, spread, fragmentation (FGD), whole-GPU islands) combinable with integer
// weights, and single-pod policies for the fragmentation benchmark (Policy).
//
// Nodes are visited only when the overlay's free index says they can hold a pod, among
// those passing the static checks, and a class of idle twin nodes is evaluated once
// (candidates.go); the candidates, their order, their scores and the random tie draws
// are exactly those of a scan of every node, so decisions do not depend on the index.
// A Diagnosis counts every node; with a FitCache it re-checks only the node blocks that
// changed since the same pod shape was last diagnosed (diagnosis_memo.go), with the same
// result as a full scan.
//
// Everything works on a *cluster.Overlay: a successful placement leaves its pods assumed
// there, a failed one leaves the overlay exactly as it was. Randomness (tie breaks) comes
// from a seeded *rand.Rand in Options; there is no I/O and no clock.
//
// Preemption at placement time and backfill reservations live in preempt*.go and
// reserve*.go of this package, on top of the API here.
package placement

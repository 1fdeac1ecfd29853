// Package cluster owns Gantry's model of the cluster: nodes (built from real v1 Node
// objects with GPU Feature Discovery labels and device-plugin capacity, or expanded from
// Gantry's NodePool kind), the topology levels and domains the nodes form, an immutable
// Snapshot of nodes plus the pods bound to them, and the Overlay: a cheap, undoable
// what-if layer over a snapshot that placement and preemption work on.
//
// So that placement looks only at nodes that can hold a pod, snapshot and overlay keep a
// free index (Overlay.FreeAtLeast: which nodes have at least n units of a GPU resource
// free, per GPU model; index*.go), remember node sets that depend on the nodes alone
// (Snapshot.StaticSet: a flavor's labels and taints), and know which idle nodes are
// configured alike (Overlay.TwinClass), so that one of them can be evaluated for all.
// The index is kept current by every assume, forget and undo, and costs a new overlay
// nothing until it writes. A snapshot made from an overlay shares what the overlay did
// not change: the blocks of node states it did not write (nodevec.go), the shards of the
// pod table it did not write (podtable.go), and carries the fleet's free milli-GPU forward
// instead of recounting it. Each block has a generation (Overlay.BlockStamp), so a memo
// of per-node answers can tell which blocks changed since it was filled.
//
// Everything here is pure: no I/O, no clocks, no randomness. GPU accounting itself is
// delegated to pkg/devices; this package only decides which NodeDevices a node has and
// keeps them consistent with the pods bound to the node.
package cluster

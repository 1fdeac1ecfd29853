// Package cluster owns Gantry's model of the cluster: nodes (built from real v1 Node
// objects with GPU Feature Discovery labels and device-plugin capacity, or expanded from
// Gantry's NodePool kind), the topology levels and domains the nodes form, an immutable
// Snapshot of nodes plus the pods bound to them, and the Overlay: a cheap, undoable
// what-if layer over a snapshot that placement and preemption work on.
//
// Everything here is pure: no I/O, no clocks, no randomness. GPU accounting itself is
// delegated to pkg/devices; this package only decides which NodeDevices a node has and
// keeps them consistent with the pods bound to the node.
package cluster

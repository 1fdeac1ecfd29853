// Package api owns Gantry's internal, typed object model: the queue objects of Kueue and
// Volcano (ResourceFlavor, ClusterQueue, LocalQueue, Cohort, priority classes, Topology),
// the Workload every job kind is turned into, Gantry's own NodePool and ClusterEvent kinds,
// and the Source of every object so errors can name file and line.
//
// The manifest loader produces these values once, at the edge, validated; every pipeline
// stage after it reads them and never sees YAML or untyped maps.
package api

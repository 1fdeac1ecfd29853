package api

// Objects is everything the manifest loader read, validated and resolved.
type Objects struct {
	Flavors         []ResourceFlavor
	ClusterQueues   []ClusterQueue
	LocalQueues     []LocalQueue
	Cohorts         []Cohort
	PriorityClasses []PriorityClass
	Topologies      []Topology
	Namespaces      []Namespace
	Workloads       []Workload
	NodePools       []NodePool
	Nodes           []Node
	Events          []ClusterEvent
}

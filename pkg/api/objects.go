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
	// Skipped are objects read and left out because they do not affect scheduling
	// (a ConfigMap beside a RayJob, the Services of a cluster dump); commands say so,
	// one line each, and `--strict` makes them errors.
	Skipped []Skipped
	// Live are the pods of a cluster dump that run already (pkg/api live.go).
	Live LiveState
	// PodsReady is the waitForPodsReady of a Kueue Configuration among the inputs
	// (podsready.go); nil when none sets it.
	PodsReady *WaitForPodsReady
	// Dynamic Resource Allocation (pkg/api dra.go): DeviceClasses, the claims and
	// claim templates pods name (already resolved into their pod sets' Claims), the
	// ResourceSlices of a node dump, and which quota resource each class counts as.
	DeviceClasses          []DeviceClass
	ResourceClaimTemplates []ResourceClaimTemplate
	ResourceClaims         []ResourceClaim
	ResourceSlices         []ResourceSlice
	QuotaMappings          []DeviceClassMapping
	// HyperNodes are Volcano's HyperNodes, members resolved; they are also the
	// Topology api.HyperNodeTopology and tier labels on the v1 Nodes (hypernode.go).
	HyperNodes []HyperNode
	// AdmissionChecks are Kueue's AdmissionChecks, ProvisioningRequestConfigs and the
	// checks each ClusterQueue requires (admissioncheck.go).
	AdmissionChecks AdmissionChecks
}

// Skipped is one object the loader left out, and why.
type Skipped struct {
	Source     Source
	APIVersion string
	Kind       string
	Name       string // namespace/name or name
	Why        string
}

func (s Skipped) String() string {
	return s.Source.String() + ": " + s.Kind + " " + s.Name + ": skipped: " + s.Why
}

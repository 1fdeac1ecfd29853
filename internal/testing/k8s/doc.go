// Package k8s holds the shared builders of Kubernetes objects: Gantry's v1alpha1 kinds
// (ClusterQueue, LocalQueue, ResourceFlavor, WorkloadPriorityClass, Workload), batch
// Jobs, Pods and Nodes, e.g. MakeJob("ns", "train").Queue("lq").Pods(4).GPUs("2").Obj().
//
// Builders of the kinds users write also render them as manifest text (YAML()), in a
// fixed layout so tests can point at lines; text keeps what does not parse ("lots" of
// CPU), which Obj panics on. Both come from the same builder state.
//
// It is apart from package testing because the same concepts have two representations
// in Gantry, the loaded model (api.ClusterQueue, cluster.Node) and the API objects
// (v1alpha1.ClusterQueue, corev1.Node), and their builders share names; and so that the
// scheduling model's tests do not compile batch and API machinery they never use.
package k8s

// SchedulerName is the spec.schedulerName of the pods Gantry binds (the controller's
// SchedulerName, which this package cannot import: the controller's internal tests use
// it; the controller's tests check the two agree).
const SchedulerName = "gantry"

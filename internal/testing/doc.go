// Package testing holds the fluent builders every package's tests share, in the style of
// Kueue's testing wrappers: MakeClusterQueue("a").Cohort("c").ResourceGroup(...).Obj(),
// MakeWorkload("ns", "a").GPUs(2).Pods(4).Priority(5).Obj(), MakeNode("n1").GPUs("H100",
// 8).Obj(). Builders panic on bad literals: they are for tests only.
//
// This package builds the values of the scheduling model (pkg/api, pkg/cluster,
// pkg/devices, pkg/resources) and imports nothing else of Gantry, so that the internal
// tests of every package above those (admission, placement, plan, engine, sim,
// controller, manifest) may use it without an import cycle. The packages it imports test
// themselves from external test packages where they use it (devices_test, cluster_test).
// Builders that need a package higher in the stack live in subpackages:
//
//   - k8s: the Kubernetes objects the controller reads and users write (Gantry's
//     v1alpha1 kinds, batch Jobs, Pods, Nodes), as typed objects or as manifest text;
//   - plans: engine plans (pkg/plan imports pkg/admission, whose internal tests use
//     this package);
//   - mocknode: node-agent nodes on a mock NVML server (pkg/nodeagent).
package testing

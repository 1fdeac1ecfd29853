// Package kubeenv starts a real Kubernetes control plane for integration tests: etcd,
// kube-apiserver and, optionally, kube-controller-manager (Job, garbage-collector and
// namespace controllers), each on free loopback ports in a temporary directory.
//
// The binaries come from hack/test-env.sh (`make test-env`), which caches them outside
// the work tree; Start never downloads or builds anything. A test package starts one
// control plane in TestMain through RunMain and shares it between its tests.
//
// Missing binaries fail the package with a message naming `make test-env`, except
// under `go test -short` (`make unit`), where the tests that need the control plane
// skip with the same message.
//
// For the side-by-side benchmark (`make bench-k8s`), StartKWOK adds KWOK as the
// kubelet of Nodes annotated KWOKNodeAnnotation, and StartScheduler the upstream
// kube-scheduler of the same release; both come from hack/bench-env.sh (same cache)
// and StopProgram stops either.
package kubeenv

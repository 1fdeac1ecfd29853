// Package controller runs Gantry on a real cluster. It owns the Kubernetes side only:
// turning Jobs (and other job kinds, and plain pods grouped by a gang annotation or a
// Volcano PodGroup) into Workload objects, reading queues, nodes (with the node agent's
// unhealthy devices) and
// pods from the API server into the engine's typed input, and committing the engine's
// plan back: Workload status, Job suspend/unsuspend, pod bindings with the device
// annotation, preemption notices and evictions (through the Eviction API, so
// PodDisruptionBudgets hold). Passes are woken by informer events (coalesced,
// rate-limited, with a long resync), not by a polling loop.
//
// The scheduling decisions themselves come from pkg/engine, the same code the
// simulator runs. The controller keeps no state of its own between cycles: every cycle
// rebuilds its view from the API server (through the informer cache), so a restart
// loses nothing, and every write is idempotent (a bound pod is never bound again).
package controller

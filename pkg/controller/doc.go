// Package controller runs Gantry on a real cluster. It owns the Kubernetes side only:
// turning Jobs (and other job kinds, and plain pods grouped by a gang annotation or a
// Volcano PodGroup) into Workload objects, reading queues, nodes (with the node agent's
// unhealthy devices) and pods into the engine's typed input, and committing the
// engine's plan back: Workload status, Job suspend/unsuspend, pod bindings with the
// device annotation, preemption notices and evictions (through the Eviction API, so
// PodDisruptionBudgets hold). Passes are woken by informer events (coalesced,
// rate-limited, with a long resync), not by a polling loop.
//
// The scheduling decisions themselves come from pkg/engine, the same code the
// simulator runs, driven the same way: one long-lived engine.Scheduler built by
// engine.Build from the queue objects (sched.go), told each pass what changed since the
// last one (feed.go: submitted, started, requeued, finished, nodes changed), so
// workloads it parked stay parked until a change can help them. It is rebuilt when the
// queue objects change, and then, as after a restart, given every workload again and
// restored from what the objects record (restore.go, persist.go): preempted-by,
// nominated victims, the preemption history of the disruption budgets, reservations.
//
// # The cache
//
// A pass reads a snapshot of stateCache, which the informer event handlers keep current
// (see watcher): no pass lists anything from the API server. The work is done per
// event, not per pass: a Node is converted (cluster.NodeFromKube, unhealthy GPUs marked)
// when it changes; queue objects are kept typed and converted through
// manifest.LoadTyped, the simulator's loader, only after one of them changed (a status
// write does not count); pods are indexed by the workload they belong to and by node.
// A snapshot copies under the lock: the converted objects and nodes are shared
// read-only, each Workload is a shallow copy the pass may overwrite with what it
// writes. Objects from the cache are never edited in place: a write goes on a deep copy
// (patchWorkload).
//
// What a pass builds from the snapshot is kept too, so a pass costs what changed: the
// admitted Workloads stay laid out on the nodes and charged to quota from one pass to
// the next (admittedLayer, input_layer.go), the bind step skips the gangs it found
// bound while nothing of theirs changed (settledGang, settled.go), and node loss
// checks again only the Workloads that changed while every node is Ready (lostMemo,
// nodelost.go). Pods and Workloads that come and go are merged into the cache's kept
// key order (keyed, cache_keyed.go).
//
// On start the controller waits until every informer has handed its objects to the
// cache, so a restart or a new leader continues where the last one stopped.
//
// # Workload admissions are never acted on stale
//
// Passes used to list Workloads uncached so that a decision never rests on an old
// admission. The cache keeps that guarantee in three ways instead:
//   - The controller's own writes are assumed, as kube-scheduler assumes its bindings:
//     every Workload it creates, updates or patches (assumingClient) is recorded in the
//     cache as the server returned it, and read in place of the informer's version until
//     the informer shows that version or a newer one (resource versions of an etcd-backed
//     API server compare as numbers; a bound, assumeTTL, covers the rest). The next pass
//     therefore sees every admission and release the last one made, even before the
//     watch event arrives; admissions are only written by the leader.
//   - On start, after the informers synced, one consistent (uncached) read of the
//     Workloads is assumed where it is newer than the informer's first list, which the
//     API server may serve from its watch cache: a new leader sees every admission the
//     last one wrote before it places anything.
//   - Every status write still carries the resourceVersion it was computed from, so a
//     decision on an object that changed meanwhile (by someone else) is refused with a
//     Conflict and retried on the next pass.
//
// Pods are read from the cache as before: binding is idempotent (a bound pod keeps its
// slot; "already bound" counts as done).
//
// Operators read the controller's decisions back through view.go (ReadView: the
// pkg/view snapshot of a live cluster from List calls alone, built with the same cache
// and state as a pass; `gantry get`, `top`, `explain --kubeconfig` and the dashboard)
// and metrics*.go (Prometheus series named as Kueue names them where the concept is
// the same; docs/metrics.md).
package controller

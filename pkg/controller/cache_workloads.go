package controller

import (
	"sort"
	"strconv"
	"time"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
)

// assumeTTL bounds how long a write of the controller's own may stand in for what the
// informer shows. With an etcd-backed API server the informer's version supersedes it
// as soon as it is as new (resource versions compare as numbers); the TTL only matters
// where they do not parse, or for an object deleted before the informer ever saw it.
const assumeTTL = 2 * time.Minute

// workloadStore keeps Workloads as the informer shows them, and on top of them the
// versions this controller wrote itself and the informer has not delivered yet
// ("assumed", as kube-scheduler assumes its bindings). Reads prefer the assumed version,
// so a pass never misses an admission (or a release) an earlier pass made.
type workloadStore struct {
	seen    keyed[*v1alpha1.Workload]
	assumed map[string]assumedWorkload
}

type assumedWorkload struct {
	obj *v1alpha1.Workload
	at  time.Time
}

// observe records the informer's version; it retires the assumed one once the informer
// has caught up with it.
func (s *workloadStore) observe(wl *v1alpha1.Workload) {
	key := wlKey(wl)
	s.seen.put(key, wl)
	if a, ok := s.assumed[key]; ok && rvAtLeast(wl.ResourceVersion, a.obj.ResourceVersion) {
		delete(s.assumed, key)
	}
}

// forget drops a deleted Workload, assumed version included.
func (s *workloadStore) forget(key string) {
	s.seen.del(key)
	delete(s.assumed, key)
}

// assume records what a write returned, unless the cache already holds as new.
func (s *workloadStore) assume(wl *v1alpha1.Workload, now time.Time) {
	key := wlKey(wl)
	if cur, ok := s.get(key); ok && rvAtLeast(cur.ResourceVersion, wl.ResourceVersion) {
		return
	}
	if s.assumed == nil {
		s.assumed = map[string]assumedWorkload{}
	}
	s.assumed[key] = assumedWorkload{obj: wl, at: now}
}

// expire drops assumed versions older than assumeTTL.
func (s *workloadStore) expire(now time.Time) {
	for key, a := range s.assumed {
		if now.Sub(a.at) > assumeTTL {
			delete(s.assumed, key)
		}
	}
}

// get returns the newest version known of key (shared: read-only).
func (s *workloadStore) get(key string) (*v1alpha1.Workload, bool) {
	if len(s.assumed) > 0 { // usually empty: skip the lookup
		if a, ok := s.assumed[key]; ok {
			return a.obj, true
		}
	}
	return s.seen.get(key)
}

// keys returns every key, sorted, assumed-only ones (created by this controller and
// not yet delivered) included.
func (s *workloadStore) keys() []string {
	keys := s.seen.keys()
	var extra []string
	for key := range s.assumed {
		if _, ok := s.seen.get(key); !ok {
			extra = append(extra, key)
		}
	}
	if len(extra) == 0 {
		return keys
	}
	all := append(append(make([]string, 0, len(keys)+len(extra)), keys...), extra...)
	sort.Strings(all)
	return all
}

// copies returns a shallow copy of every Workload in key order: a pass owns the structs
// (a write replaces a whole struct or field with the server's answer), while their maps
// and slices stay shared with the cache and are never written in place.
func (s *workloadStore) copies() []v1alpha1.Workload {
	keys := s.keys()
	out := make([]v1alpha1.Workload, len(keys))
	for i, key := range keys {
		wl, _ := s.get(key)
		out[i] = *wl
	}
	return out
}

// rvAtLeast reports whether resourceVersion a is at least b. Resource versions are
// opaque to clients, but an etcd-backed API server issues increasing integers; when
// either does not parse only equality counts, and assumeTTL ends the wait.
func rvAtLeast(a, b string) bool {
	if a == b {
		return true
	}
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x >= y
}

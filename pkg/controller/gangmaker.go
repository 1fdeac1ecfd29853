package controller

import (
	"context"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// gangTouches are the plain-pod gangs whose pods changed since the gang maker last
// looked: the cache records them as pod events come, the maker takes them.
type gangTouches struct {
	mu    sync.Mutex
	gangs map[podOwner]struct{}
	ch    chan struct{} // holds one signal while gangs is not empty
}

func newGangTouches() *gangTouches {
	return &gangTouches{gangs: map[podOwner]struct{}{}, ch: make(chan struct{}, 1)}
}

// touch records p's gang, if p is in a plain-pod gang (the kinds syncPodGangs makes
// Workloads for).
func (g *gangTouches) touch(p *corev1.Pod) {
	kind, name := gangOf(p)
	if kind != KindPodGang && kind != KindPodGroup {
		return
	}
	g.mu.Lock()
	g.gangs[gangOwner(p.Namespace, kind, name)] = struct{}{}
	g.mu.Unlock()
	select {
	case g.ch <- struct{}{}:
	default:
	}
}

// take returns the gangs touched since the last take, in a stable order, and forgets
// them.
func (g *gangTouches) take() []podOwner {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]podOwner, 0, len(g.gangs))
	for o := range g.gangs {
		out = append(out, o)
	}
	clear(g.gangs)
	sort.Slice(out, func(i, j int) bool {
		if out[i].ns != out[j].ns {
			return out[i].ns < out[j].ns
		}
		if out[i].by != out[j].by {
			return out[i].by < out[j].by
		}
		return out[i].name < out[j].name
	})
	return out
}

// gangPods are the pods the cache holds of the given gangs, gang after gang.
func (c *stateCache) gangPods(gangs []podOwner) []*corev1.Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*corev1.Pod
	for _, o := range gangs {
		out = append(out, c.pods.byOwner[o]...)
	}
	return out
}

// gangMakerPause is how long the gang maker lets pod events gather before it looks:
// the pods of one gang are created together, and one look serves them all.
const gangMakerPause = 20 * time.Millisecond

// makeGangs creates (and finishes) the Workloads of plain-pod gangs as their pods'
// events come, between passes: a gang whose last pod arrives while a pass runs has
// its Workload when the next pass starts, which then admits it at once instead of
// first creating it (a round trip to the API server, all gangs' creates in a pass
// waiting for the slowest). It looks only at the gangs whose pods changed. A pass
// still syncs every gang every gangSweepEvery when the maker is idle (syncGangs), the
// safety net for anything missed here; gangMu keeps the two from working on the same
// gang at once.
func (ctl *Controller) makeGangs(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ctl.cache.touched.ch:
		}
		if !sleepCtx(ctx, gangMakerPause) {
			return
		}
		pods := ctl.cache.gangPods(ctl.cache.touched.take())
		if len(pods) == 0 {
			continue
		}
		ctl.gangMu.Lock()
		wrote := ctl.syncGangPods(ctx, ctl.cache.workload, pods, ctl.opts.Now())
		ctl.gangMu.Unlock()
		if wrote {
			ctl.wake.Poke()
		}
	}
}

package nodeagent_test

import (
	"context"
	"sync"

	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// podCount is a GPUPodCounter with a fixed answer.
type podCount int

func (p podCount) GPUPods(context.Context) (int, error) { return int(p), nil }

// fakeNode records what the agent writes to the Node.
type fakeNode struct {
	mu        sync.Mutex
	labels    map[string]string
	statuses  []migprotocol.Status
	unhealthy []string
}

func (f *fakeNode) SetLabels(_ context.Context, l map[string]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.labels == nil {
		f.labels = map[string]string{}
	}
	for k, v := range l {
		f.labels[k] = v
	}
	return nil
}

func (f *fakeNode) SetMIGStatus(_ context.Context, s migprotocol.Status) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses = append(f.statuses, s)
	return nil
}

func (f *fakeNode) SetUnhealthyDevices(_ context.Context, ids []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unhealthy = append([]string(nil), ids...)
	return nil
}

// fakePods is a PodLookup that always answers with one pod.
type fakePods struct{ pod nodeagent.Pod }

func (f fakePods) PodForAllocate(context.Context, resources.Name, []string) (nodeagent.Pod, bool, error) {
	return f.pod, f.pod.Name != "", nil
}

package controller

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/manifest"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// world is one consistent read of everything a cycle needs, from the informer cache.
type world struct {
	objs       *api.Objects // queue kinds, validated by the same loader the simulator uses
	nodes      []cluster.Node
	nodeIndex  map[string]int
	workloads  []v1alpha1.Workload
	pods       []corev1.Pod
	priorities map[string]int32        // WorkloadPriorityClass and PriorityClass values by name
	unhealthy  map[string]map[int]bool // node -> GPU indices the node agent reported unhealthy
	warnings   []string
}

// readWorld lists the cluster state. Queue objects go through manifest.LoadBytes so they
// are validated and defaulted exactly as in `gantry simulate`.
func readWorld(ctx context.Context, c, direct client.Reader) (*world, error) {
	w := &world{nodeIndex: map[string]int{}, priorities: map[string]int32{}}
	var docs bytes.Buffer
	lists := []struct {
		list client.ObjectList
		kind string
	}{
		{&v1alpha1.ResourceFlavorList{}, "ResourceFlavor"},
		{&v1alpha1.CohortList{}, "Cohort"},
		{&v1alpha1.ClusterQueueList{}, "ClusterQueue"},
		{&v1alpha1.LocalQueueList{}, "LocalQueue"},
		{&v1alpha1.WorkloadPriorityClassList{}, "WorkloadPriorityClass"},
		{&v1alpha1.TopologyList{}, "Topology"},
	}
	for _, l := range lists {
		if err := c.List(ctx, l.list); err != nil {
			return nil, fmt.Errorf("list %s: %w", l.kind, err)
		}
		if err := appendDocs(&docs, l.list, v1alpha1.SchemeGroupVersion.String(), l.kind); err != nil {
			return nil, err
		}
	}
	var nss corev1.NamespaceList
	if err := c.List(ctx, &nss); err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	if err := appendDocs(&docs, &nss, "v1", "Namespace"); err != nil {
		return nil, err
	}
	objs, err := manifest.LoadBytes("cluster", docs.Bytes())
	if err != nil {
		return nil, err
	}
	w.objs = objs
	for _, pc := range objs.PriorityClasses {
		w.priorities[pc.Name] = pc.Value
	}
	var pcs schedulingv1.PriorityClassList
	if err := c.List(ctx, &pcs); err != nil {
		return nil, fmt.Errorf("list priorityclasses: %w", err)
	}
	for _, pc := range pcs.Items {
		if _, wpc := w.priorities[pc.Name]; !wpc {
			w.priorities[pc.Name] = pc.Value
		}
	}
	if err := w.readNodes(ctx, c); err != nil {
		return nil, err
	}
	var wls v1alpha1.WorkloadList
	if err := direct.List(ctx, &wls); err != nil {
		return nil, fmt.Errorf("list workloads: %w", err)
	}
	w.workloads = wls.Items
	sort.Slice(w.workloads, func(i, j int) bool { return wlKey(&w.workloads[i]) < wlKey(&w.workloads[j]) })
	var pods corev1.PodList
	if err := c.List(ctx, &pods); err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	w.pods = pods.Items
	sort.Slice(w.pods, func(i, j int) bool {
		return w.pods[i].Namespace+"/"+w.pods[i].Name < w.pods[j].Namespace+"/"+w.pods[j].Name
	})
	return w, nil
}

// readNodes converts every Node; a node Gantry cannot read is left out with its error
// logged by the caller through the returned list (it simply offers no capacity).
func (w *world) readNodes(ctx context.Context, c client.Reader) error {
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].Name < nodes.Items[j].Name })
	for i := range nodes.Items {
		n, err := cluster.NodeFromKube(api.Node{Object: nodes.Items[i], Source: api.Source{File: "node " + nodes.Items[i].Name}})
		if err != nil {
			continue
		}
		bad, err := markUnhealthy(&nodes.Items[i], n.Devices)
		if err != nil {
			w.warnings = append(w.warnings, err.Error())
		}
		for _, g := range bad {
			if w.unhealthy == nil {
				w.unhealthy = map[string]map[int]bool{}
			}
			if w.unhealthy[n.Name] == nil {
				w.unhealthy[n.Name] = map[int]bool{}
			}
			w.unhealthy[n.Name][g] = true
		}
		w.nodeIndex[n.Name] = len(w.nodes)
		w.nodes = append(w.nodes, n)
	}
	return nil
}

// appendDocs writes the items of list as YAML documents with apiVersion and kind set.
func appendDocs(buf *bytes.Buffer, list client.ObjectList, apiVersion, kind string) error {
	items, err := itemsOf(list)
	if err != nil {
		return err
	}
	for _, obj := range items {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		u["apiVersion"], u["kind"] = apiVersion, kind
		if md, ok := u["metadata"].(map[string]any); ok {
			// Server-side bookkeeping is not part of the object a user writes.
			delete(md, "managedFields")
		}
		delete(u, "status")
		data, err := yaml.Marshal(u)
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	return nil
}

func itemsOf(list client.ObjectList) ([]runtime.Object, error) {
	objs, err := metaExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("list items: %w", err)
	}
	return objs, nil
}

func wlKey(w *v1alpha1.Workload) string { return w.Namespace + "/" + w.Name }

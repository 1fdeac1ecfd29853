package controller

import (
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// updateDRA records o when it is a DRA object (u.ok). A change of a node's
// ResourceSlices converts that node again, outside the lock as putNode does, unless
// the Node itself changed meanwhile (its own event converted it with the new slices).
func (c *stateCache) updateDRA(o client.Object, del bool) draUpdate {
	c.mu.Lock()
	u := c.dra.update(o, del)
	var n *corev1.Node
	var slices []resourcev1.ResourceSlice
	if e, ok := c.nodes.get(u.node); ok && u.node != "" {
		n, slices = e.obj, c.dra.nodeSlices(u.node)
	}
	c.mu.Unlock()
	if n == nil {
		return u
	}
	e := convertNode(n, slices)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.nodes.get(u.node); ok && cur.obj == n {
		c.nodes.put(u.node, e)
		c.nodeView = nil
	}
	return u
}

// Package kubenode backs the node agent's small interfaces with the Kubernetes API and
// the kubelet: nodeagent.NodeUpdater and nodeagent.MIGNode (labels, the MIG state label
// with Gantry's detail annotation, and the GantryMIGLayout condition of the agent's own
// Node), nodeagent.GPUPodCounter (GPU pods still on the
// node, before a MIG re-layout: GPU limits, or DRA claims allocated this node's GPU
// devices, read through the same client) and nodeagent.PodLookup (which pod an Allocate call is
// for: the oldest pending pod on the node that requests the resource and that the
// kubelet's pod-resources API does not yet list with all of its devices). Asking a node
// for a MIG config is migprotocol.Requester's job (no NVML there, so the static
// controller binary has it too).
package kubenode

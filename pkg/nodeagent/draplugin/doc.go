// Package draplugin is Gantry's node agent as a Dynamic Resource Allocation kubelet
// plugin, under NVIDIA's GPU driver name (gpu.nvidia.com), so DeviceClasses and claims
// written for NVIDIA's DRA driver work unchanged.
//
//   - Publishing (health.go): the node's GPUs and MIG devices as pkg/dra's NodeInventory
//     derives them from the discovered devices.GPU values and NVML facts (node.go), one
//     ResourceSlice pool named after the node, through the kubelet-plugin helper's
//     ResourceSlice controller; a device that turns unhealthy (the agent's health
//     watcher) is left out of the republished pool.
//   - Preparing (prepare.go, cdi.go): NodePrepareResources writes one CDI spec per claim
//     (NVIDIA_VISIBLE_DEVICES with the allocated GPUs' or MIG devices' UUIDs per request)
//     and returns its CDI device IDs; NodeUnprepareResources removes it. Both are
//     idempotent.
//   - Dynamic MIG (migcarve.go): a claim allocated a placement device of a GPU whose MIG
//     layout is chosen at allocation time (all-dynamic, pkg/dra's partitionable
//     devices) gets that GPU instance and a compute instance created at the placement
//     when it is prepared (Config.MIG, NVMLCarver: the node agent's NVML MIG code), its
//     MIG UUID in the CDI spec; unprepare destroys it. The checkpoint records what was
//     carved, an instance found already at the placement is adopted, and a claim whose
//     carving fails part way has its carves undone. A claim given such a GPU whole has
//     its MIG mode turned off first (MIGCarver.Whole), so CUDA sees one GPU; the next
//     carving turns it back on.
//   - Restarts (checkpoint.go): prepared claims are kept in a checkpoint file in the
//     plugin directory, so a restarted agent answers repeated prepares the same, never
//     hands a prepared device to another claim, and unprepares what it prepared before.
//
// Kubernetes' k8s.io/dynamic-resource-allocation/kubeletplugin helper serves the gRPC
// (registration with the kubelet's plugin watcher, the DRA service, claim lookup).
// Tests play the kubelet over the sockets, on go-nvml's DGX mocks. See docs/node-agent.md.
package draplugin

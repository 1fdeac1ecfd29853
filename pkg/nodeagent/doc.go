// Package nodeagent is Gantry's agent on a GPU node: what NVIDIA's GPU Feature
// Discovery, device plugin, MIG manager and health checks do, made to agree with
// Gantry's device model (pkg/devices). NVML is NVIDIA's go-nvml (its dlopen loader on a
// node, its DGX mocks in tests), so this package needs a cgo build.
//
//   - Discovery (discover.go, profiles.go, topology.go, migread.go): reads the GPUs
//     through nvml.Interface (model, memory, UUIDs, PCI addresses, every GPU-instance
//     profile NVML offers with its memory and placements, live MIG devices, NVLink graph,
//     compute capability) into devices.GPU values and Facts.
//   - Labels (labels.go): the node labels GFD writes plus Gantry's NVLink-domain labels.
//   - Inventory, allocation (inventory.go, allocate.go, preferred.go): the devices the
//     kubelet device plugin advertises per resource name (replicas per resource,
//     time-sliced MIG, MPS limits), keyed by Gantry device IDs, with the UUIDs a
//     container's NVIDIA_VISIBLE_DEVICES needs.
//   - MIG manager (migmanager.go, migreconcile.go, migplan.go, migapply.go,
//     migoperands.go): brings the GPUs to the mig-parted config the node's
//     nvidia.com/mig.config label names, pausing the GPU Operator's operands, as NVIDIA's
//     MIG manager does (the protocol's words are in migprotocol, the file format in
//     migparted). Under all-dynamic (migparted.Dynamic) it leaves the GPUs alone: the
//     DRA plugin sets MIG mode and carves instances per claim (migdynamic.go).
//   - Health (health.go, health_config.go): NVML XID and ECC events to device health,
//     with NVIDIA's application-XID filter and DP_DISABLE_HEALTHCHECKS.
//
// Sub-packages: deviceplugin (the kubelet gRPC servers and re-registration), kubenode
// (client-go implementations of NodeUpdater, MIGNode, GPUPodCounter and PodLookup),
// migparted, migprotocol, pluginconfig (NVIDIA's device-plugin config file). Everything
// is tested without a cluster or a GPU; hack/nvml-check reads a real GPU, read-only.
// See docs/node-agent.md.
package nodeagent

// Package nodeagent is Gantry's agent on a GPU node: what NVIDIA's GPU Feature
// Discovery, MIG manager and device-plugin health checks do, made to agree with
// Gantry's device model (pkg/devices).
//
//   - Discovery (discover.go, topology.go, migread.go): reads the GPUs through the
//     nvml.Interface (model, memory, UUIDs, PCI addresses, MIG instances, NVLink graph)
//     into devices.GPU values; NVLink domains are the connected components of the NVLink
//     graph, PCIe switches are grouped from bus numbers.
//   - Labels (labels.go): the node labels GFD writes plus Gantry's NVLink-domain labels.
//   - Inventory (inventory.go): the devices the kubelet device plugin advertises per
//     resource name, keyed by Gantry device IDs (devices.Assignment.IDs form), with the
//     UUIDs a container's NVIDIA_VISIBLE_DEVICES needs.
//   - MIG manager (migmanager.go): applies a named layout (node annotation
//     gantry.dev/mig-layout) when no GPU pods run, refusing layouts pkg/devices rejects.
//   - Health (health.go): turns NVML XID and ECC events into device health changes.
//
// The kubelet gRPC server lives in the deviceplugin sub-package; the NVML interface and
// its DGX A100 mock in nvml and nvml/mock; the client-go implementations of the small
// NodeUpdater, GPUPodCounter and PodLookup interfaces in kubenode. Everything here is
// tested without a cluster or a GPU. See docs/node-agent.md.
package nodeagent

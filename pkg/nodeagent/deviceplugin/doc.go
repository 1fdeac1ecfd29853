// Package deviceplugin is Gantry's kubelet device plugin: one gRPC server per advertised
// resource name (nvidia.com/gpu, nvidia.com/mig-<profile>, nvidia.com/gpu.shared) on a
// unix socket in the kubelet's device-plugin directory. It registers with the kubelet,
// streams the devices and their health (ListAndWatch), prefers devices the way Gantry's
// device model picks them (GetPreferredAllocation) and returns each container's
// environment (Allocate), honouring the scheduler's gantry.dev/devices annotation.
// Registrar keeps the servers registered across kubelet restarts (a recreated
// kubelet.sock). The decisions live in pkg/nodeagent (Inventory, Allocator); this
// package is the wire.
package deviceplugin

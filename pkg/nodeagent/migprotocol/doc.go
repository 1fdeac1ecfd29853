// Package migprotocol is the GPU Operator's MIG protocol as NVIDIA's MIG manager speaks
// it, with no NVML in it: the node label that names the desired mig-parted config, the
// state label the manager reports on, the operand deploy labels paused around a change,
// and the Requester that asks a node for a config and waits for the outcome. Gantry's
// MIG manager (pkg/nodeagent) and its planner side (`gantry mig request`, the static
// controller binary) share it, so both speak the same words.
package migprotocol

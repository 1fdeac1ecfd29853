// Package dra is Gantry's Dynamic Resource Allocation stage (resource.k8s.io/v1),
// between the device model (pkg/devices) and the cluster: pure, no clients, clocks or
// globals. The device model stays the one accountant: a DRA allocation is a
// devices.Assignment committed on devices.NodeDevices like any other, so no GPU or MIG
// instance is ever given twice across the extended-resource and DRA paths.
//
//   - Inventory (inventory*.go, slices*.go): a node's DRA devices derived from its
//     []devices.GPU as NVIDIA's GPU DRA driver names and describes them (DeviceFor,
//     NodeInventory, its ResourceSlices), and GPUs read back from a node dump's slices.
//   - Partitionable GPUs (partition*.go): a GPU with a dynamic MIG layout published as
//     one shared counter set with the GPU whole and every MIG placement drawing on it;
//     the counters encode the placement rules (docs/dra-partitionable.md).
//   - Classes (classes.go, kinds.go, selector.go): DeviceClasses compiled once (CEL through
//     k8s.io/dynamic-resource-allocation/cel, its cache and cost limits) with the quota
//     mappings, Kueue's deviceClassMappings (DefaultQuotaMappings).
//   - Claims (claims.go, compile.go, podclaims.go): Classes.Compile turns a pod's
//     ResourceClaim specs into PodClaims: the device kind and MIG profile each request's
//     selectors pick among the catalog's devices, constraints, and errors naming the
//     claim and field. PodClaims.Request is the pod's devices.Request (whole GPUs, or MIG
//     instances per profile) with the claims as its devices.Filter; Quota what the pod
//     counts against quota.
//   - Allocation (filter.go, eval.go, match.go, diagnose.go, results.go): the filter
//     evaluates selectors on Fit's free candidates (memoised per device) and matches
//     devices to requests in Fit's order of preference, honouring firstAvailable
//     subrequests and matchAttribute constraints; Results splits an Assignment into
//     per-claim AllocationResults as kube-scheduler writes them; Explain and Refusal
//     say which claim, request, selector or constraint and device ruled a node out.
//
// allocationMode All (allmode.go) is sized per node by the matcher (a devices.SizedFilter)
// and charged to quota the most it matches on one node of the cluster (WithNodes).
// What Gantry does not do (compile errors say so): distinctAttribute, consumable
// capacity; a pod's claims take one kind of device. Admin-access requests
// consume nothing and are given their devices in Results. See docs/dra-allocation.md.
package dra

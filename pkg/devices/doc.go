// Package devices owns Gantry's GPU device model: pure accounting of what each GPU of a
// node offers and which exact devices a pod holds. No I/O, no clocks, no randomness.
//
//   - Catalog (model.go, catalog.go, catalog_mig.go, family.go): GPU models with memory,
//     family, compute capability and MIG geometry (profile memory as NVML reports it),
//     looked up by canonical ID, GPU Feature Discovery product label or short name;
//     cloud.go maps GKE accelerator labels and cloud instance types onto models, and
//     generic.go describes a GPU the catalog does not know from its memory alone.
//   - Names (names.go): the MIG label keys and product values GPU Feature Discovery
//     writes, in the Kubernetes spelling ("+me" becomes ".me"; resources.MIGResource
//     builds the resource names).
//   - MIG (layout.go): every profile with its real placement rule (memory slices taken,
//     allowed start slots, per-GPU count, one +me instance per GPU); ValidateLayout
//     accepts exactly what the hardware accepts; named layouts in mig-parted style
//     (all-disabled, all-<profile>, all-balanced, custom) resolve to concrete slots.
//   - Dynamic MIG (dynamic.go, dynamic_space.go, dynamic_place.go, dynamic_fit.go): the
//     layout all-dynamic carves instances as DRA claims are allocated them (KEP-4815
//     partitionable devices); every valid layout of a geometry is listed once, and an
//     instance goes where it leaves the GPU the most of them. Only filtered (DRA)
//     requests use such GPUs.
//   - Sharing (sharing.go): exclusive, MIG single/mixed, time-slicing, MPS, fractional,
//     with the resource names the NVIDIA device plugin advertises for each; NVIDIA's
//     per-resource replication (a subset of the GPUs, time-sliced MIG devices as
//     migunits.go lays them out) applied per GPU as the node agent applies it.
//   - Allocation (node.go, fit.go, pick.go, commit.go): NodeDevices.Fit picks devices for
//     one pod's Request without side effects and returns an Assignment or a Refusal;
//     Commit and Release apply it all-or-nothing and never double-book. A Request's
//     Filter (filter.go, filter_fit.go) lets pkg/dra choose among Fit's free candidates
//     (whole GPUs and MIG instances only) for DRA selectors and constraints.
//   - Accounting (accounting.go): one unit, gantry.dev/gpu-milli, for whole GPUs, MIG
//     instances, replicas and shares, so quota and fair share count them together.
//
// See docs/devices.md for the overview and the profile tables.
package devices

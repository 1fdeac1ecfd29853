// Package nvmlmock is go-nvml's DGX mocks (dgxa100, dgxh100, dgxh200, dgxb200) with what
// the node agent needs from NVML and those mocks lack, added by setting the mocks' *Func
// fields and wrapping the ones they have:
//
//   - MIG: GPU instances are created only at one of NVML's possible placements, on free
//     memory slices, within the compute slices, per-profile instance counts and media
//     engines of the GPU (the mocks accept anything); a GPU instance with compute
//     instances cannot be destroyed; MIG mode can be left pending until a GPU reset;
//     instances are listed only while MIG mode is on, as NVML does.
//   - MIG device handles (GetMaxMigDeviceCount, GetMigDeviceHandleByIndex) with UUIDs.
//   - PCI bus IDs and NVLink links to NVSwitches, links that can be taken down.
//   - Event sets with injected XID and ECC events, and GPUs whose events cannot be watched.
//   - Stable GPU UUIDs and NVML's real product names where a mock's differ.
//
// It has no test dependencies so `gantry node-agent --mock` can offer the machines.
package nvmlmock

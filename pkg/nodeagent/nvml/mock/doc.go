// Package mock is Gantry's own NVML mock: a DGX A100 (8x A100-SXM4-40GB on NVSwitch,
// PCIe addresses, driver and CUDA versions like a real system) that switches MIG mode
// and creates GPU and compute instances under the placement rules of the hardware.
//
// The A100 placement table here (profiles.go) is written from NVIDIA's MIG User Guide
// and `nvidia-smi mig -lgipp` output, independently of pkg/devices, so tests can check
// the two against each other. Events (XID, ECC) are injected by tests.
package mock

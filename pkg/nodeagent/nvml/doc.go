// Package nvml is Gantry's own small view of NVIDIA's Management Library: the subset of
// go-nvml's nvml.Interface and nvml.Device that GPU discovery, MIG management and health
// watching need, with go-nvml's typed return codes (Return) and method names, so that a
// later switch to github.com/NVIDIA/go-nvml is a thin adapter. (go-nvml itself could not
// be fetched from the Go module proxy when this was written.)
//
// Implementations:
//   - New (real_cgo.go, build tags "nvml" and cgo): libnvidia-ml.so.1 loaded with dlopen.
//     Without those tags New returns ErrNotBuilt, so default builds need neither cgo
//     nor the library.
//   - package mock: a DGX A100 with MIG placement enforced like the hardware, for tests
//     and `gantry node-agent --dry-run --mock dgx-a100`.
package nvml

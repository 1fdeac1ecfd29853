// Package bench holds Gantry's experiments:
//   - scale (scale.go): the generated fleets of `gantry bench scale` that measure the
//     engine at 1,000-10,000 nodes;
//   - frag (frag*.go, `gantry bench frag`): openb pods placed one by one under each
//     placement policy, measuring the GPU demand left unallocated as arrivals grow past
//     capacity (FGD's experiment);
//   - jct (jct.go, `gantry bench jct`): a Philly replay through the simulator under fifo,
//     gantry and sjf queueing, summarising job completion time and queueing delay.
//
// It builds on pkg/sim, pkg/sim/trace and pkg/sim/report; none of them imports it.
package bench

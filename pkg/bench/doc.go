// Package bench holds Gantry's experiments: the generated fleets of `gantry bench scale`
// (scale.go) that measure the engine at 1,000-10,000 nodes, with more to come.
package bench

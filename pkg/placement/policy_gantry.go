package placement

// newGantryRule is Gantry's single-pod GPU placement: the scorers DefaultScorersFor
// gives once GPU shapes are known (the fragmentation scorer, which also weighs stranded
// GPU and place pressure, and PreferNoSchedule), reading the shapes as they are observed,
// on the device model's pick of GPUs (the GPU with the least free share that fits), ties
// drawn at random. It is what the engine's gang placement does for a one-pod workload.
func newGantryRule(shapes *ShapeStats) nodeRule {
	return scorerRule{scorers: fragmentationScorers(shapes)}
}

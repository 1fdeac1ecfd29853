package devices

// GFDFamily is the nvidia.com/gpu.family value GPU Feature Discovery writes for the
// model, derived as GFD derives it, from the compute capability: "ampere", "hopper",
// "ada-lovelace", "blackwell", ..., and "undefined" when the capability is unknown.
func (m Model) GFDFamily() string {
	return FamilyOfComputeCapability(m.ComputeMajor, m.ComputeMinor)
}

// FamilyOfComputeCapability maps a CUDA compute capability to GFD's family name.
func FamilyOfComputeCapability(major, minor int) string {
	switch major {
	case 1:
		return "tesla"
	case 2:
		return "fermi"
	case 3:
		return "kepler"
	case 5:
		return "maxwell"
	case 6:
		return "pascal"
	case 7:
		if minor < 5 {
			return "volta"
		}
		return "turing"
	case 8:
		if minor < 9 {
			return "ampere"
		}
		return "ada-lovelace"
	case 9:
		return "hopper"
	case 10, 12: // data-centre (10.x) and workstation (12.x) Blackwell
		return "blackwell"
	case 13:
		return "rubin"
	}
	return GenericFamily
}

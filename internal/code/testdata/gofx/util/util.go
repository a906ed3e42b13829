package util

// Scale multiplies x by the global factor.
func Scale(x float64) float64 {
	return x * 2
}

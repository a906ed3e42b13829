package calc

import (
	"example.com/fx/shape"
	"example.com/fx/util"
)

// Total adds the areas of shapes.
func Total(shapes []shape.Shape) float64 {
	sum := 0.0
	for _, s := range shapes {
		sum += s.Area()
	}
	return util.Scale(sum)
}

// Helper is called from main.
func Helper() int { return 1 }

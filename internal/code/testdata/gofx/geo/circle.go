package geo

import "example.com/fx/util"

// Circle is a circle of radius R.
type Circle struct{ R float64 }

// Area of the circle.
func (c Circle) Area() float64 { return util.Scale(3 * c.R * c.R) }

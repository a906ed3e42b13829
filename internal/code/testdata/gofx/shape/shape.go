// Package shape declares what every shape can do.
package shape

// Shape is anything with an area.
type Shape interface {
	// Area is the shape's surface.
	Area() float64
}

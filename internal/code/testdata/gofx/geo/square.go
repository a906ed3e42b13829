package geo

import "example.com/fx/util"

// Square is a square of side S.
type Square struct{ S float64 }

// Area of the square.
func (q Square) Area() float64 { return util.Scale(q.S * q.S) }

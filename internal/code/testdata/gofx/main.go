package main

import (
	"fmt"

	"example.com/fx/calc"
	"example.com/fx/geo"
	"example.com/fx/shape"
	"example.com/fx/util"
)

func main() {
	shapes := []shape.Shape{geo.Square{S: 2}, geo.Circle{R: 1}}
	fmt.Println(calc.Total(shapes), util.Scale(1))
	fmt.Println("héllo😀", calc.Helper())
}

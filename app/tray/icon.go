package tray

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
)

// The icons are drawn in code rather than embedded: every tray variant, the window icon and
// build/appicon.png come from the same few shapes, at any size, and a test keeps the PNG files
// under build/ identical to what the binary draws (regenerate them with
// SWITCHBOARD_UPDATE_ICONS=1 go test ./app/tray -run TestIconFiles).
//
// The motif is a switchboard: two columns of jacks and a patch cord. The background colour says
// whether the hub is reachable (grey: no MCP transport; blue: listening; green: listening with
// the IDE bridge online); the cord is plugged in only while the hub listens; an amber badge
// means an MCP client is connected.

// Icon sizes: the tray hosts scale the pixmap down; 64 px stays sharp on HiDPI panels.
const (
	iconSize       = 64
	WindowIconSize = 256
	appIconSize    = 1024
)

// Colours, from the dashboard's palette (frontend/src/app.css: --idle, --accent, --ok, --busy).
var (
	colourStopped = color.NRGBA{0x6e, 0x76, 0x81, 0xff}
	colourIdle    = color.NRGBA{0x2f, 0x81, 0xf7, 0xff}
	colourOnline  = color.NRGBA{0x3f, 0xb9, 0x50, 0xff}
	colourBadge   = color.NRGBA{0xd2, 0x99, 0x22, 0xff}
	colourGlyph   = color.NRGBA{0xff, 0xff, 0xff, 0xff}
)

// vec is a point in icon space: (0,0) top left, (1,1) bottom right.
type vec struct{ x, y float64 }

func (a vec) sub(b vec) vec                 { return vec{a.x - b.x, a.y - b.y} }
func (a vec) dot(b vec) float64             { return a.x*b.x + a.y*b.y }
func (a vec) length() float64               { return math.Hypot(a.x, a.y) }
func (a vec) scale(k float64) vec           { return vec{a.x * k, a.y * k} }
func clamp01(v float64) float64             { return math.Max(0, math.Min(1, v)) }
func circleSDF(p, c vec, r float64) float64 { return p.sub(c).length() - r }

// shape is a signed distance function (negative inside) in icon space.
type shape func(p vec) float64

func circle(c vec, r float64) shape { return func(p vec) float64 { return circleSDF(p, c, r) } }

func ring(c vec, r, width float64) shape {
	return func(p vec) float64 { return math.Abs(circleSDF(p, c, r)) - width/2 }
}

// capsule is a line from a to b with round ends, radius r.
func capsule(a, b vec, r float64) shape {
	return func(p vec) float64 {
		pa, ba := p.sub(a), b.sub(a)
		h := clamp01(pa.dot(ba) / ba.dot(ba))
		return pa.sub(ba.scale(h)).length() - r
	}
}

// roundedSquare is centred at c with half-size h and corner radius r.
func roundedSquare(c vec, h, r float64) shape {
	return func(p vec) float64 {
		qx := math.Abs(p.x-c.x) - (h - r)
		qy := math.Abs(p.y-c.y) - (h - r)
		outside := math.Hypot(math.Max(qx, 0), math.Max(qy, 0))
		return outside + math.Min(math.Max(qx, qy), 0) - r
	}
}

// layer is a shape filled with one colour; layers are painted in order.
type layer struct {
	s shape
	c color.NRGBA
}

// iconLayers is the drawing for one variant.
func iconLayers(v Icon) []layer {
	bg := colourIdle
	switch {
	case !v.HubUp:
		bg = colourStopped
	case v.BridgeOnline:
		bg = colourOnline
	}
	ls := []layer{{roundedSquare(vec{0.5, 0.5}, 0.46, 0.2), bg}}
	const jackR, ringW, cordR = 0.085, 0.04, 0.032
	cols := []float64{0.3, 0.7}
	rows := []float64{0.28, 0.5, 0.72}
	from, to := vec{cols[0], rows[0]}, vec{cols[1], rows[2]}
	for _, x := range cols {
		for _, y := range rows {
			j := vec{x, y}
			plugged := v.HubUp && (j == from || j == to)
			if plugged {
				ls = append(ls, layer{circle(j, jackR), colourGlyph})
			} else {
				ls = append(ls, layer{ring(j, jackR-ringW/2, ringW), colourGlyph})
			}
		}
	}
	if v.HubUp {
		ls = append(ls, layer{capsule(from, to, cordR), colourGlyph})
	}
	if v.Active {
		badge := vec{0.8, 0.2}
		ls = append(ls, layer{circle(badge, 0.19), colourGlyph}, layer{circle(badge, 0.15), colourBadge})
	}
	return ls
}

// renderIcon draws a variant at size×size pixels. Edges are anti-aliased from the distance
// functions (coverage = distance in pixels, clamped), so one sample per pixel suffices.
func renderIcon(v Icon, size int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	ls := iconLayers(v)
	px := 1 / float64(size)
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			p := vec{(float64(x) + 0.5) * px, (float64(y) + 0.5) * px}
			var r, g, b, a float64 // premultiplied, 0..1
			for _, l := range ls {
				cov := clamp01(0.5 - l.s(p)/px)
				if cov == 0 {
					continue
				}
				// Porter-Duff "over" with an opaque layer colour at coverage cov.
				r = float64(l.c.R)/255*cov + r*(1-cov)
				g = float64(l.c.G)/255*cov + g*(1-cov)
				b = float64(l.c.B)/255*cov + b*(1-cov)
				a = cov + a*(1-cov)
			}
			if a == 0 {
				continue
			}
			img.SetNRGBA(x, y, color.NRGBA{
				R: uint8(math.Round(r / a * 255)),
				G: uint8(math.Round(g / a * 255)),
				B: uint8(math.Round(b / a * 255)),
				A: uint8(math.Round(a * 255)),
			})
		}
	}
	return img
}

// IconPNG encodes a variant as PNG.
func IconPNG(v Icon, size int) []byte {
	var buf bytes.Buffer
	// Encoding an in-memory NRGBA into a bytes.Buffer cannot fail.
	_ = png.Encode(&buf, renderIcon(v, size))
	return buf.Bytes()
}

// AppIcon is the application icon: the hub listening, nobody connected.
func AppIcon() Icon { return Icon{HubUp: true} }

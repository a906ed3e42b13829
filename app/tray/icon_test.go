package tray

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// iconAt samples the icon at icon-space coordinates.
func iconAt(img *image.NRGBA, x, y float64) color.NRGBA {
	n := img.Bounds().Dx()
	return img.NRGBAAt(int(x*float64(n)), int(y*float64(n)))
}

func TestRenderIcon(t *testing.T) {
	for _, v := range iconVariants() {
		t.Run(v.name(), func(t *testing.T) {
			img, err := png.Decode(bytes.NewReader(IconPNG(v, iconSize)))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if b := img.Bounds(); b.Dx() != iconSize || b.Dy() != iconSize {
				t.Fatalf("size %v, want %dx%d", b, iconSize, iconSize)
			}
			n := img.(*image.NRGBA)
			if c := iconAt(n, 0, 0); c.A != 0 {
				t.Errorf("corner is %v, want transparent (rounded square)", c)
			}
			wantBG := colourIdle
			switch {
			case !v.HubUp:
				wantBG = colourStopped
			case v.BridgeOnline:
				wantBG = colourOnline
			}
			if c := iconAt(n, 0.5, 0.9); c != wantBG {
				t.Errorf("background %v, want %v", c, wantBG)
			}
			// The cord crosses the centre only while the hub listens.
			if c := iconAt(n, 0.5, 0.5); (c == colourGlyph) != v.HubUp {
				t.Errorf("centre %v: cord drawn=%v, want %v", c, c == colourGlyph, v.HubUp)
			}
			if c := iconAt(n, 0.8, 0.2); (c == colourBadge) != v.Active {
				t.Errorf("badge pixel %v: badge=%v, want %v", c, c == colourBadge, v.Active)
			}
		})
	}
}

// iconFiles are the PNGs under build/ that must match what the binary draws.
func iconFiles() map[string]func() *image.NRGBA {
	files := map[string]func() *image.NRGBA{
		"../../build/appicon.png": func() *image.NRGBA { return renderIcon(AppIcon(), appIconSize) },
	}
	// hicolor theme sizes for the desktop entry's Icon=switchboard.
	for _, size := range []int{48, 128, 256, 512} {
		files[fmt.Sprintf("../../build/icons/switchboard-%d.png", size)] = func() *image.NRGBA { return renderIcon(AppIcon(), size) }
	}
	for _, v := range iconVariants() {
		files[fmt.Sprintf("../../build/icons/tray-%s.png", v.name())] = func() *image.NRGBA { return renderIcon(v, iconSize) }
	}
	return files
}

// TestIconFiles keeps build/appicon.png (Wails' app icon), the hicolor icons and the tray
// variants identical to the drawing code. SWITCHBOARD_UPDATE_ICONS=1 rewrites them.
func TestIconFiles(t *testing.T) {
	update := os.Getenv("SWITCHBOARD_UPDATE_ICONS") == "1"
	for path, render := range iconFiles() {
		want := render()
		if update {
			var buf bytes.Buffer
			if err := png.Encode(&buf, want); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			t.Errorf("%s: %v (regenerate with SWITCHBOARD_UPDATE_ICONS=1 go test ./app/tray -run TestIconFiles)", path, err)
			continue
		}
		got, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if got.Bounds() != want.Bounds() {
			t.Errorf("%s: size %v, want %v", path, got.Bounds(), want.Bounds())
			continue
		}
		diff := 0
		for y := 0; y < want.Bounds().Dy(); y++ {
			for x := 0; x < want.Bounds().Dx(); x++ {
				if color.NRGBAModel.Convert(got.At(x, y)) != want.NRGBAAt(x, y) {
					diff++
				}
			}
		}
		if diff > 0 {
			t.Errorf("%s: %d pixels differ from the drawing code (regenerate with SWITCHBOARD_UPDATE_ICONS=1 go test ./app/tray -run TestIconFiles)", path, diff)
		}
	}
}

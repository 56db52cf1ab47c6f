package e2e

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

// TestCheckRender: a screenshot of one colour, or of too few, looks blank;
// one with text on it does not; the bytes of 8-bit RGBA and any other
// image type are counted alike.
func TestCheckRender(t *testing.T) {
	paint := func(img interface {
		image.Image
		Set(x, y int, c color.Color)
	}, colours int) []byte {
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := color.RGBA{250, 250, 250, 255}
				if colours > 1 && y%4 == 0 {
					k := uint8(x % colours * 20)
					c = color.RGBA{k, 255 - k, k / 2, 255}
				}
				img.Set(x, y, c)
			}
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	r := image.Rect(0, 0, 64, 32)
	for _, tc := range []struct {
		name  string
		png   []byte
		width int64
		want  string
	}{
		{"text on RGBA", paint(image.NewRGBA(r), 10), 64, ""},
		{"text on NRGBA", paint(image.NewNRGBA(r), 10), 64, ""},
		{"text on RGBA64", paint(image.NewRGBA64(r), 10), 64, ""},
		{"blank", paint(image.NewRGBA(r), 1), 64, "looks blank: 1 colours"},
		{"blank NRGBA", paint(image.NewNRGBA(r), 1), 64, "looks blank: 1 colours"},
		{"blank RGBA64", paint(image.NewRGBA64(r), 1), 64, "looks blank: 1 colours"},
		{"too few colours", paint(image.NewRGBA(r), 3), 64, "looks blank: 4 colours"},
		{"too narrow", paint(image.NewRGBA(r), 10), 390, "64 px wide, want 390"},
		{"not a PNG", []byte("GIF89a"), 64, "not a PNG"},
	} {
		err := checkRender(tc.png, tc.width)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

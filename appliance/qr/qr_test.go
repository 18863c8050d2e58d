package qr

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"outpost/internal/testkit"
)

func TestATAKEnroll(t *testing.T) {
	for _, c := range []struct {
		host        string
		port        int
		user, token string
		want        string
	}{
		{"tak.example.org", 8089, "kim", "abc-_123", "tak://com.atakmap.app/enroll?host=tak.example.org&username=kim&token=abc-_123"},
		{"10.0.0.5", 8090, "Kim Lee", "t", "tak://com.atakmap.app/enroll?host=10.0.0.5%3A8090&username=Kim+Lee&token=t"},
		{"h", 0, "a&b=c", "x", "tak://com.atakmap.app/enroll?host=h&username=a%26b%3Dc&token=x"},
	} {
		if got := ATAKEnroll(c.host, c.port, c.user, c.token); got != c.want {
			t.Errorf("ATAKEnroll(%q, %d, %q, %q) = %q, want %q", c.host, c.port, c.user, c.token, got, c.want)
		}
	}
}

func TestITAKQuickConnect(t *testing.T) {
	for _, c := range []struct{ desc, host, want string }{
		{"outpost", "tak.example.org", "outpost,tak.example.org,8089,SSL"},
		{"a, b\n", "h", "a b,h,8089,SSL"},
		{",", "h", "h,h,8089,SSL"},
	} {
		if got := ITAKQuickConnect(c.desc, c.host, 8089); got != c.want {
			t.Errorf("ITAKQuickConnect(%q, %q) = %q, want %q", c.desc, c.host, got, c.want)
		}
	}
}

func TestRenderLimits(t *testing.T) {
	if _, err := PNG(strings.Repeat("a", MaxText+1), 256); !errors.Is(err, ErrTooLong) {
		t.Errorf("PNG of a long text: %v", err)
	}
	if _, err := Terminal(""); err == nil {
		t.Error("Terminal of an empty text: no error")
	}
}

// TestDecodedByZbar reads both renderings back with a decoder that is not
// ours (Debian's zbar-tools): the PNG as it is, the terminal drawing
// turned back into pixels, one module per half block.
func TestDecodedByZbar(t *testing.T) {
	texts := []string{
		ATAKEnroll("tak.example.org", 8089, "kim", "Zq3v-0_aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2y"),
		ITAKQuickConnect("outpost", "192.0.2.7", 8089),
		"https://tak.example.org:8446/Marti/api/tls/enrollment-package?device=wintak",
	}
	for i, text := range texts {
		p, err := PNG(text, 320)
		if err != nil {
			t.Fatal(err)
		}
		if got := testkit.DecodeQR(t, p); got != text {
			t.Errorf("text %d: zbarimg read the PNG as %q, want %q", i, got, text)
		}
		term, err := Terminal(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := testkit.DecodeQR(t, terminalPNG(t, term)); got != text {
			t.Errorf("text %d: zbarimg read the terminal drawing as %q, want %q", i, got, text)
		}
	}
}

// terminalPNG draws a Terminal rendering as a dark terminal shows it: a
// block's glyph is light, the rest dark; 4 pixels per module.
func terminalPNG(t *testing.T, s string) []byte {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	w := len([]rune(lines[0]))
	const px = 4
	img := image.NewGray(image.Rect(0, 0, w*px, len(lines)*2*px))
	for y, line := range lines {
		for x, r := range []rune(line) {
			top := r == '█' || r == '▀'
			bottom := r == '█' || r == '▄'
			for dy := 0; dy < 2*px; dy++ {
				light := top
				if dy >= px {
					light = bottom
				}
				for dx := 0; dx < px; dx++ {
					c := color.Gray{0}
					if light {
						c = color.Gray{255}
					}
					img.SetGray(x*px+dx, y*2*px+dy, c)
				}
			}
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// findChromium: $BOOKLOAD_CHROMIUM, else chromium (Debian), chromium-browser,
// google-chrome on PATH.
func findChromium() (string, error) {
	if p := os.Getenv("BOOKLOAD_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium, chromium-browser or google-chrome on PATH and BOOKLOAD_CHROMIUM unset")
}

// needChromium returns the browser, or skips when it is not installed. Under
// CI=true a missing browser fails: `make setup` installs it there
// (scripts/browser-tools.sh).
func needChromium(t *testing.T) string {
	t.Helper()
	p, err := findChromium()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v; scripts/browser-tools.sh installs Debian's chromium", err)
		}
		t.Skipf("SKIP: Chromium cannot be found (%v); install it with scripts/browser-tools.sh (apt-get install chromium)", err)
	}
	return p
}

// chart is what the page says about one rendered chart.
type chart struct {
	Kind         string  `json:"kind"`
	X, Y, W, H   float64 // on the page, CSS px
	ContentW     float64 `json:"contentW"` // bounding box of what was drawn
	ContentH     float64 `json:"contentH"`
	Paths, Texts int
}

const inspectJS = `(() => [...document.querySelectorAll('svg.chart')].map(s => {
  const r = s.getBoundingClientRect(), b = s.getBBox();
  return {kind: s.dataset.kind, X: r.left + window.scrollX, Y: r.top + window.scrollY, W: r.width, H: r.height,
          contentW: b.width, contentH: b.height,
          Paths: s.querySelectorAll('path').length, Texts: s.querySelectorAll('text').length};
}))()`

// TestReportInChromium opens a report in headless Chromium: the page loads
// with no console message of level error or warning, no exception and no
// request besides the file itself; every chart is laid out with a size and
// drawn content; and the screenshot shows ink inside every chart's area.
func TestReportInChromium(t *testing.T) {
	bin := needChromium(t)
	r := buildReport(t, fixture(t))
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := r.WriteFile(page); err != nil {
		t.Fatal(err)
	}
	url := "file://" + page

	var chromeOut bytes.Buffer
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.WindowSize(1280, 900),
		chromedp.CombinedOutput(&chromeOut),
	)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	var mu sync.Mutex
	var problems, requests []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning || e.Type == runtime.APITypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				problems = append(problems, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Error())
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError || e.Entry.Level == log.LevelWarning {
				problems = append(problems, fmt.Sprintf("log %s (%s): %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		}
	})

	var charts []chart
	var title string
	var resources int
	var shot []byte
	start := time.Now()
	err := chromedp.Run(ctx,
		chromedp.Navigate(url),
		chromedp.WaitReady("footer", chromedp.ByQuery),
		chromedp.Title(&title),
		chromedp.Evaluate(inspectJS, &charts),
		chromedp.Evaluate(`performance.getEntriesByType('resource').length`, &resources),
		chromedp.FullScreenshot(&shot, 100),
	)
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, chromeOut.String())
	}
	shotPath := filepath.Join(dir, "report.png")
	if keep := os.Getenv("BOOKLOAD_TEST_ARTIFACTS"); keep != "" {
		_ = os.MkdirAll(keep, 0o755)
		shotPath = filepath.Join(keep, "report-screenshot.png")
	}
	if err := os.WriteFile(shotPath, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded in %v: %q, %d charts, screenshot %s (%d bytes)", time.Since(start).Round(time.Millisecond), title, len(charts), shotPath, len(shot))

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser reported: %s", p)
	}
	for _, u := range requests {
		if u != url {
			t.Errorf("the page requested %s: it must be self-contained", u)
		}
	}
	if resources != 0 {
		t.Errorf("%d resources loaded besides the page", resources)
	}
	if !strings.HasPrefix(title, "bookload report: demo-details") {
		t.Errorf("title %q", title)
	}
	if len(charts) != 12 { // 9, and a waterfall per productpage profile
		t.Fatalf("%d charts on the page, want 12", len(charts))
	}

	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	for i, c := range charts {
		if c.W < 300 || c.H < 150 || c.ContentW <= 0 || c.ContentH <= 0 {
			t.Errorf("chart %d (%s): laid out %.0f×%.0f px, drawn content %.0f×%.0f", i, c.Kind, c.W, c.H, c.ContentW, c.ContentH)
		}
		if c.Paths < 10 || c.Texts < 5 {
			t.Errorf("chart %d (%s): %d paths, %d texts: not a plot", i, c.Kind, c.Paths, c.Texts)
		}
		if ink := inkFraction(img, c); ink < 0.02 {
			t.Errorf("chart %d (%s): only %.2f%% of its screenshot area is not white", i, c.Kind, 100*ink)
		}
	}
}

// inkFraction is the share of non-white pixels in c's area of the screenshot.
func inkFraction(img image.Image, c chart) float64 {
	area := image.Rect(int(c.X), int(c.Y), int(c.X+c.W), int(c.Y+c.H)).Intersect(img.Bounds())
	if area.Empty() {
		return 0
	}
	var ink, all int
	for y := area.Min.Y; y < area.Max.Y; y += 2 {
		for x := area.Min.X; x < area.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			all++
			if r < 0xf000 || g < 0xf000 || b < 0xf000 {
				ink++
			}
		}
	}
	return float64(ink) / float64(all)
}

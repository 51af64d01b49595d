package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"
)

// browser is one tab of a real headless Chromium (Debian's package)
// driven over the DevTools protocol, with every console error, uncaught
// exception and error log entry (a CSP refusal among them) it reports.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string // http://host:port of the mcpflow under test

	mu     sync.Mutex
	errors []string
}

// chromiumPath is Debian's Chromium, or a skip (a failure in CI).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	missingPeer(t, "chromium is not on PATH: install it with apt-get install -y chromium")
	return ""
}

// newChromium starts a headless Chromium for the test; tabs are opened
// on it with newTab. It is stopped at cleanup (chromedp also gives it
// Pdeathsig, so it dies with the test binary).
func newChromium(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, // CI runs as root
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	is.New(t).NoErr(chromedp.Do(ctx)) // Chromium starts
	return ctx
}

// newTab opens a tab (its own sessionStorage) on base, collecting the
// errors it reports until the test ends.
func newTab(t *testing.T, chromium context.Context, base string) *browser {
	t.Helper()
	ctx, cancel := chromedp.NewContext(chromium)
	is.New(t).NoErr(chromedp.Do(ctx)) // the tab opens
	b := &browser{t: t, ctx: ctx, base: base}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return // the tab closed
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				b.addError(fmt.Sprintf("%s %s:%d", m.String(), m.URL, m.Line))
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return b
}

func (b *browser) addError(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errors = append(b.errors, s)
}

// noErrors fails the test if the page has logged any error so far.
func (b *browser) noErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errors) > 0 {
		b.t.Fatalf("the page logged errors:\n%s", strings.Join(b.errors, "\n"))
	}
}

// do runs actions with a deadline, failing the test with what step.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.shot("failure")
		b.t.Fatalf("%s: %v", what, err)
	}
}

// open loads the console at a hash route.
func (b *browser) open(route string) {
	b.t.Helper()
	b.do("open "+route, chromedp.Navigate(b.base+"/console/#/"+route), chromedp.WaitReady(chromedp.CSS("#root")))
}

// route follows an in-page link (no reload).
func (b *browser) route(route string) {
	b.t.Helper()
	b.eval("navigate", fmt.Sprintf("window.location.hash = %q", "#/"+route), nil)
}

// signIn types the token and waits for the screens' navigation.
func (b *browser) signIn(token string) {
	b.t.Helper()
	b.do("sign in",
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`nav[aria-label="Screens"]`)),
	)
}

// wait polls a JavaScript condition until it holds.
func (b *browser) wait(what, js string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(15*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		b.shot("failure")
		b.mu.Lock()
		logged := strings.Join(b.errors, "\n")
		b.mu.Unlock()
		b.t.Fatalf("wait for %s: %v\npage errors: %s", what, err, logged)
	}
}

// eval runs JavaScript (a value or a promise), decoding its value into
// out (nil: ignored).
func (b *browser) eval(what, js string, out any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string]("(async () => JSON.stringify({v: await ("+js+")}))()", chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	var v struct{ V json.RawMessage }
	is.New(b.t).NoErr(json.Unmarshal([]byte(text), &v))
	if out != nil {
		is.New(b.t).NoErr(json.Unmarshal(v.V, out))
	}
}

// click clicks the visible, enabled button (or link) whose text is label.
func (b *browser) click(label string) {
	b.t.Helper()
	sel := chromedp.Search(fmt.Sprintf(`//*[self::button or self::a][normalize-space(.)=%q][not(@disabled)]`, label))
	b.do("click "+label, chromedp.WaitVisible(sel), chromedp.Click(sel))
}

// press clicks the element selector matches.
func (b *browser) press(selector string) {
	b.t.Helper()
	b.do("click "+selector, chromedp.WaitVisible(chromedp.CSS(selector)), chromedp.Click(chromedp.CSS(selector)))
}

// fill sets an input, textarea or select the way typing would (React
// sees the native input or change event).
func (b *browser) fill(selector, value string) {
	b.t.Helper()
	b.do("find "+selector, chromedp.WaitVisible(chromedp.CSS(selector)))
	js := fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		const proto = el.tagName === "SELECT" ? HTMLSelectElement.prototype : el.tagName === "TEXTAREA" ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
		Object.getOwnPropertyDescriptor(proto, "value").set.call(el, %q);
		el.dispatchEvent(new Event(el.tagName === "SELECT" ? "change" : "input", {bubbles: true}));
		return el.value;
	})()`, selector, value)
	var got string
	b.eval("fill "+selector, js, &got)
	is.New(b.t).Equal(got, value) // the control took the value
}

// has is whether selector matches a visible element now.
func (b *browser) has(selector string) bool {
	b.t.Helper()
	var n int
	b.eval("count "+selector, fmt.Sprintf(`[...document.querySelectorAll(%q)].filter(e => e.offsetParent !== null).length`, selector), &n)
	return n > 0
}

// hasText is whether a visible button or link reads label.
func (b *browser) hasText(label string) bool {
	b.t.Helper()
	var n int
	b.eval("look for "+label, fmt.Sprintf(`[...document.querySelectorAll("button, a")].filter(e => e.offsetParent !== null && e.textContent.trim() === %q).length`, label), &n)
	return n > 0
}

// drag presses the mouse on from, moves it in steps and releases it on to.
func (b *browser) drag(from, to string) {
	b.t.Helper()
	center := func(sel string) (float64, float64) {
		var xy []float64
		b.eval("locate "+sel, fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]; })()`, sel), &xy)
		return xy[0], xy[1]
	}
	b.do("see "+from, chromedp.WaitVisible(chromedp.CSS(from)), chromedp.WaitVisible(chromedp.CSS(to)))
	x0, y0 := center(from)
	x1, y1 := center(to)
	actions := []chromedp.Action[chromedp.Void]{chromedp.MouseEvent(chromedp.MouseMoved, x0, y0), chromedp.MouseEvent(chromedp.MousePressed, x0, y0, chromedp.ButtonLeft, chromedp.ClickCount(1))}
	for i := 1; i <= 10; i++ {
		f := float64(i) / 10
		actions = append(actions, chromedp.MouseEvent(chromedp.MouseMoved, x0+(x1-x0)*f, y0+(y1-y0)*f, chromedp.ButtonLeft))
	}
	actions = append(actions, chromedp.MouseEvent(chromedp.MouseReleased, x1, y1, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	b.do("drag "+from+" to "+to, actions...)
}

// clickStep clicks a step of the canvas with the mouse, once the canvas
// has settled: a new layout remounts it and fits the view, which moves
// the nodes for a few frames.
func (b *browser) clickStep(id string) {
	b.t.Helper()
	b.wait("step "+id+" at rest", fmt.Sprintf(`new Promise((resolve) => {
		const el = document.querySelector('[data-step=%q]');
		if (!el) return resolve(false);
		const a = JSON.stringify(el.getBoundingClientRect());
		setTimeout(() => requestAnimationFrame(() => resolve(JSON.stringify(el.getBoundingClientRect()) === a && el.isConnected)), 150);
	})`, id))
	sel := chromedp.CSS(fmt.Sprintf(`[data-step=%q]`, id))
	b.do("click step "+id, chromedp.WaitVisible(sel), chromedp.Click(sel))
}

// shot writes a screenshot of the page to <name>.png in the test's
// temporary folder, or in docs/console/ when MCPFLOW_SCREENSHOTS is set
// (so that go test ./... leaves a clone's files as they were, and the
// docs' screens are rewritten on request). The "failure" shot goes to
// the system's temporary folder, which outlives the test, and is logged.
func (b *browser) shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	dir := b.t.TempDir()
	if os.Getenv("MCPFLOW_SCREENSHOTS") != "" {
		dir = filepath.Join(moduleRoot(b.t), "docs", "console")
	}
	if name == "failure" {
		dir = os.TempDir()
		b.t.Logf("failure screenshot: %s", filepath.Join(dir, "console-failure.png"))
		name = "console-failure"
	}
	is.New(b.t).NoErr(os.MkdirAll(dir, 0o755))
	is.New(b.t).NoErr(os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

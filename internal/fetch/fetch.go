package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// Limits.
const (
	DefaultMaxBytes = 1 << 20
	MaxMaxBytes     = 5 << 20
	MaxRedirects    = 5
	DefaultTimeout  = 30 * time.Second
)

// Options configure a Fetcher.
type Options struct {
	Allow     []string      // allow-list entries (see ParseAllow)
	Timeout   time.Duration // whole request, redirects included (default 30 s)
	UserAgent string
}

// Fetcher fetches URLs safely. Safe for concurrent use. The allow-list and the timeout can be
// replaced while it runs (Configure), so a change in the Settings view applies to the next fetch.
type Fetcher struct {
	allow   atomic.Pointer[Allow]
	client  *http.Client
	timeout atomic.Int64 // time.Duration
	ua      string
}

// FieldError is an error about one input field; Field is the JSON key.
type FieldError struct {
	Field string
	Msg   string
}

// Error reports the field by its JSON key, so the agent knows which argument to fix.
func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// RefusedError is an address the fetcher would not connect to.
type RefusedError struct {
	Addr   string
	Reason string
}

// Error names the address, the reason and how a user can allow a host they trust.
func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused to connect to %s: %s; if you trust this host, add it to SWITCHBOARD_FETCH_ALLOW or [web] allow", e.Addr, e.Reason)
}

// New builds a Fetcher.
func New(o Options) (*Fetcher, error) {
	allow, err := ParseAllow(o.Allow)
	if err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.UserAgent == "" {
		o.UserAgent = "Switchboard-web_fetch/1 (+https://github.com/switchboard-hub/switchboard)"
	}
	f := &Fetcher{ua: o.UserAgent}
	f.allow.Store(allow)
	f.timeout.Store(int64(o.Timeout))
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would dial for us and bypass the address check
		DialContext:           GuardedDial(dialer, f.allow.Load, nil),
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 20 * time.Second,
		MaxIdleConns:          16,
		IdleConnTimeout:       60 * time.Second,
	}
	f.client = &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return &FieldError{"url", fmt.Sprintf("more than %d redirects (last to %s)", MaxRedirects, req.URL.Redacted())}
			}
			if err := f.checkURL(req.URL); err != nil {
				return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
			}
			return nil
		},
	}
	return f, nil
}

// Configure replaces the allow-list and the timeout (0: the default) for the fetches that start
// from now on; on an error nothing changes.
func (f *Fetcher) Configure(allowList []string, timeout time.Duration) error {
	allow, err := ParseAllow(allowList)
	if err != nil {
		return err
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	f.allow.Store(allow)
	f.timeout.Store(int64(timeout))
	return nil
}

// checkURL validates scheme and host spelling (the address itself is checked when dialed).
func (f *Fetcher) checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return &FieldError{"url", fmt.Sprintf("scheme %q is not allowed; only http and https", u.Scheme)}
	}
	if u.User != nil {
		return &FieldError{"url", "credentials in the URL (user:pass@) are not allowed"}
	}
	host := u.Hostname()
	if host == "" {
		return &FieldError{"url", "has no host"}
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	allow := f.allow.Load()
	if allow.Host(host, port) {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ap := netip.AddrPortFrom(ip, 0)
		if p, err := netip.ParseAddrPort(net.JoinHostPort(host, port)); err == nil {
			ap = p
		}
		if allow.Addr(ap) {
			return nil
		}
		if reason := BlockedReason(ip); reason != "" {
			return &FieldError{"url", fmt.Sprintf("host %s is %s; refused (SSRF protection). If you trust it, add it to SWITCHBOARD_FETCH_ALLOW or [web] allow", host, reason)}
		}
		return nil
	}
	if strings.Contains(host, "%") {
		return &FieldError{"url", fmt.Sprintf("host %q contains %%; zones and escapes are not allowed", host)}
	}
	if numericHost(host) {
		return &FieldError{"url", fmt.Sprintf("host %q is an IP address in a non-standard spelling (decimal, hex, octal or shortened); refused (SSRF protection). Write the address as a.b.c.d", host)}
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c > 0x7f) {
			return &FieldError{"url", fmt.Sprintf("host %q contains %q", host, c)}
		}
	}
	return nil
}

// Result is one fetched page.
type Result struct {
	URL         string
	FinalURL    string
	Status      int
	ContentType string
	Content     string
	Truncated   bool
}

// Fetch retrieves rawURL. format is markdown (default), text or raw; maxBytes bounds the body
// read (default DefaultMaxBytes, at most MaxMaxBytes).
func (f *Fetcher) Fetch(ctx context.Context, rawURL string, maxBytes int, format string) (Result, error) {
	switch format {
	case "":
		format = "markdown"
	case "markdown", "text", "raw":
	default:
		return Result{}, &FieldError{"format", fmt.Sprintf("%q is not a format; use markdown, text or raw", format)}
	}
	if maxBytes < 0 || maxBytes > MaxMaxBytes {
		return Result{}, &FieldError{"max_bytes", fmt.Sprintf("%d is out of range; use 1 to %d", maxBytes, MaxMaxBytes)}
	}
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	if rawURL == "" {
		return Result{}, &FieldError{"url", "empty; give an http or https URL"}
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return Result{}, &FieldError{"url", fmt.Sprintf("does not parse: %v", err)}
	}
	if err := f.checkURL(u); err != nil {
		return Result{}, err
	}
	timeout := time.Duration(f.timeout.Load())
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Result{}, &FieldError{"url", err.Error()}
	}
	req.Header.Set("User-Agent", f.ua)
	accept := "text/html,application/xhtml+xml,text/plain;q=0.9,text/markdown;q=0.9,application/json;q=0.8,*/*;q=0.5"
	req.Header.Set("Accept", accept)
	resp, err := f.client.Do(req)
	if err != nil {
		var re *RefusedError
		if errors.As(err, &re) {
			return Result{}, &FieldError{"url", re.Error()}
		}
		var fe *FieldError
		if errors.As(err, &fe) {
			return Result{}, fe
		}
		if ctx.Err() != nil {
			return Result{}, &FieldError{"url", fmt.Sprintf("timed out after %s", timeout)}
		}
		return Result{}, &FieldError{"url", fmt.Sprintf("fetch failed: %v", unwrapURL(err))}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(maxBytes)+1))
	if err != nil && len(body) == 0 {
		return Result{}, &FieldError{"url", fmt.Sprintf("reading the response: %v", err)}
	}
	res := Result{URL: rawURL, FinalURL: resp.Request.URL.String(), Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type")}
	if len(body) > maxBytes {
		body, res.Truncated = body[:maxBytes], true
	}
	mt, params, _ := mime.ParseMediaType(res.ContentType)
	if !textual(mt, body) {
		return Result{}, &FieldError{"url", fmt.Sprintf("the response is %s, not text; web_fetch returns text only", orUnknown(mt))}
	}
	// Decode to UTF-8 by the declared (or sniffed, for HTML) charset.
	if r, err := charset.NewReader(bytes.NewReader(body), res.ContentType); err == nil && params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8") {
		if dec, err := io.ReadAll(r); err == nil {
			body = dec
		}
	}
	isHTML := mt == "text/html" || mt == "application/xhtml+xml" || (mt == "" && looksHTML(body))
	switch {
	case format == "raw" || !isHTML:
		res.Content = toValidUTF8(body, res.Truncated)
	case format == "text":
		res.Content = htmlText(body)
	default:
		md, err := markdownConverter.ConvertString(string(body), converter.WithDomain(baseURL(resp.Request.URL)))
		if err != nil {
			res.Content = htmlText(body)
		} else {
			res.Content = md
		}
	}
	return res, nil
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "of unknown type"
	}
	return s
}

func baseURL(u *url.URL) string {
	return u.Scheme + "://" + u.Host
}

func textual(mt string, body []byte) bool {
	switch {
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", mt == "application/xml", mt == "application/xhtml+xml",
		mt == "application/javascript", mt == "application/x-javascript", mt == "application/ecmascript",
		mt == "application/yaml", mt == "application/x-yaml", mt == "application/toml", mt == "application/x-sh",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	case mt == "" || mt == "application/octet-stream":
		head := body[:min(len(body), 1024)]
		return bytes.IndexByte(head, 0) < 0 && utf8.Valid(trimPartialRune(head))
	}
	return false
}

func trimPartialRune(b []byte) []byte {
	for i := 0; i < 3 && len(b) > 0 && !utf8.Valid(b); i++ {
		b = b[:len(b)-1]
	}
	return b
}

// markdownConverter turns pages into Markdown: CommonMark, and tables as Markdown tables (the
// library's default converter runs a table's cells together, and a model cannot rebuild it).
// A Converter is safe for concurrent use.
var markdownConverter = converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin()))

func looksHTML(b []byte) bool {
	head := strings.ToLower(string(b[:min(len(b), 512)]))
	return strings.Contains(head, "<html") || strings.Contains(head, "<!doctype html")
}

func toValidUTF8(b []byte, truncated bool) string {
	if truncated {
		b = trimPartialRune(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// htmlText extracts the visible text of an HTML document: no scripts, styles or markup, block
// elements on their own lines.
func htmlText(b []byte) string {
	z := html.NewTokenizer(bytes.NewReader(b))
	var out strings.Builder
	skip := 0
	block := map[string]bool{"p": true, "div": true, "br": true, "li": true, "tr": true, "h1": true, "h2": true, "h3": true,
		"h4": true, "h5": true, "h6": true, "pre": true, "section": true, "article": true, "header": true, "footer": true, "table": true, "ul": true, "ol": true, "title": true}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return collapseBlank(out.String())
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			n := string(name)
			if n == "script" || n == "style" || n == "noscript" || n == "template" || n == "svg" {
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
			}
			if block[n] {
				out.WriteByte('\n')
			}
		case html.TextToken:
			if skip == 0 {
				out.WriteString(strings.Join(strings.Fields(string(z.Text())), " "))
				out.WriteByte(' ')
			}
		}
	}
}

func collapseBlank(s string) string {
	var lines []string
	blank := false
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			if !blank && len(lines) > 0 {
				lines = append(lines, "")
			}
			blank = true
			continue
		}
		blank = false
		lines = append(lines, l)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

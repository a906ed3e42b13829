package tools

import (
	"context"
	"errors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/fetch"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// web_fetch: http(s) pages as Markdown, text or raw, SSRF-safe (internal/fetch).

// WebFetchInput is web_fetch's arguments: the URL, how much of the body to read and the format to
// return it in.
type WebFetchInput struct {
	URL      string `json:"url" jsonschema:"http or https URL; internal addresses (loopback, private, link-local, ...) are refused unless allow-listed"`
	MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"read at most this many bytes of the body (default 1 MiB, at most 5 MiB)"`
	Format   string `json:"format,omitempty" jsonschema:"markdown (default: HTML converted to Markdown), text (visible text only) or raw (the body as sent); non-HTML text is returned as is"`
}

// WebFetchOutput is web_fetch's result: the page in the requested format, with the status and where
// redirects led.
type WebFetchOutput struct {
	URL         string `json:"url" jsonschema:"echoed URL"`
	FinalURL    string `json:"final_url" jsonschema:"URL after redirects (at most 5)"`
	Status      int    `json:"status" jsonschema:"HTTP status code"`
	ContentType string `json:"content_type" jsonschema:"Content-Type header of the response"`
	Content     string `json:"content" jsonschema:"the page in the requested format"`
	Truncated   bool   `json:"truncated" jsonschema:"the body was longer than max_bytes and was cut"`
}

// WebTools is web_fetch (WithWebFetch).
type WebTools struct{ fetcher *fetch.Fetcher }

// NewWebTools is web_fetch's dependencies.
func NewWebTools(f *fetch.Fetcher) *WebTools { return &WebTools{fetcher: f} }

// WebGroup declares the group's tools (toolset web) as values that need no hub;
// NewWebTools builds the dependencies they are bound to.
func WebGroup() tool.Group {
	return tool.NewGroup("web",
		tool.Func(sdk.Tool{Name: "web_fetch", Annotations: tool.OpenWorld(tool.ReadOnly("Fetch web page")),
			Description: "Fetch an http(s) URL and return it as Markdown (HTML converted), plain text or raw. Follows up to 5 redirects. Refuses internal addresses (loopback, private, link-local, CGNAT, multicast, in any spelling, checked on the address actually connected) unless the user allow-listed them (SWITCHBOARD_FETCH_ALLOW or [web] allow)."}, (*WebTools).webFetch),
	)
}

func (g *WebTools) webFetch(ctx context.Context, _ *sdk.CallToolRequest, in WebFetchInput) (*sdk.CallToolResult, WebFetchOutput, error) {
	res, err := g.fetcher.Fetch(ctx, in.URL, in.MaxBytes, in.Format)
	if err != nil {
		var fe *fetch.FieldError
		if errors.As(err, &fe) {
			return nil, WebFetchOutput{}, fe
		}
		return nil, WebFetchOutput{}, err
	}
	return nil, WebFetchOutput{URL: res.URL, FinalURL: res.FinalURL, Status: res.Status, ContentType: res.ContentType, Content: res.Content, Truncated: res.Truncated}, nil
}

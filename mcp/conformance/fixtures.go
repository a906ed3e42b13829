// Package conformance carries the fixture tools, prompts and resources that the MCP conformance
// suite (@modelcontextprotocol/conformance) calls by name (test_simple_text, test://static-text,
// test_prompt_with_arguments, ...). `switchboard-dev conformance` (cmd/switchboard-dev) adds them to a normal hub, so
// the suite exercises Switchboard's own transports, middleware and tool declarations (tool.New),
// not a separate test server. A production hub never registers them.
//
// The behaviour of every fixture follows the scenario descriptions shipped with the suite.
package conformance

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// Fixtures implements mcp.Subsystem.
type Fixtures struct{}

// Name implements mcp.Subsystem.
func (Fixtures) Name() string { return "conformance-fixtures" }

// ServerOptions adds the server-level handlers the suite expects: completion/complete and
// resources/(un)subscribe.
func ServerOptions(o *sdk.ServerOptions) {
	o.CompletionHandler = func(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
		// The only completable argument is test_prompt_with_arguments' arg1/arg2; offer the
		// typed prefix back as a value so a client sees a real completion.
		vals := []string{}
		if req.Params != nil && req.Params.Argument.Value != "" {
			vals = append(vals, req.Params.Argument.Value+"-completed")
		}
		return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: vals, Total: len(vals)}}, nil
	}
	o.SubscribeHandler = func(context.Context, *sdk.SubscribeRequest) error { return nil }
	o.UnsubscribeHandler = func(context.Context, *sdk.UnsubscribeRequest) error { return nil }
}

// A 1×1 PNG and a tiny silent WAV, as the suite's scenarios describe them.
var (
	pngData = mustB64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	wavData = mustB64("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")
)

func mustB64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

type none struct{}

type result struct {
	OK bool `json:"ok" jsonschema:"whether the fixture ran"`
}

type promptIn struct {
	Prompt string `json:"prompt" jsonschema:"the prompt to send to the client's model"`
}

type messageIn struct {
	Message string `json:"message" jsonschema:"the message to show the user"`
}

func content(c ...sdk.Content) *sdk.CallToolResult { return &sdk.CallToolResult{Content: c} }

// Tools implements mcp.Subsystem: the fixture tools (the prompts and resources are added by
// AddPromptsAndResources).
func (Fixtures) Tools() tool.Group {
	var tools []tool.Tool
	ro := func(title string) *sdk.ToolAnnotations { return tool.ReadOnly(title) }
	simple := func(name, desc string, c ...sdk.Content) {
		tools = append(tools, tool.New(sdk.Tool{Name: name, Description: desc, Annotations: ro(name)},
			func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, result, error) {
				return content(c...), result{OK: true}, nil
			}))
	}
	simple("test_simple_text", "Conformance fixture: returns one text block.",
		&sdk.TextContent{Text: "This is a simple text response for testing."})
	simple("test_image_content", "Conformance fixture: returns one PNG image block.",
		&sdk.ImageContent{Data: pngData, MIMEType: "image/png"})
	simple("test_audio_content", "Conformance fixture: returns one WAV audio block.",
		&sdk.AudioContent{Data: wavData, MIMEType: "audio/wav"})
	simple("test_embedded_resource", "Conformance fixture: returns an embedded text resource.",
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}})
	simple("test_multiple_content_types", "Conformance fixture: returns text, image and resource blocks.",
		&sdk.TextContent{Text: "Multiple content types test:"},
		&sdk.ImageContent{Data: pngData, MIMEType: "image/png"},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}})

	tools = append(tools, tool.New(sdk.Tool{Name: "test_tool_with_logging", Description: "Conformance fixture: sends three log messages while it runs.", Annotations: ro("logging")},
		func(ctx context.Context, req *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, result, error) {
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					time.Sleep(50 * time.Millisecond)
				}
				_ = req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "info", Logger: "conformance", Data: msg})
			}
			return content(&sdk.TextContent{Text: "Tool with logging executed successfully"}), result{OK: true}, nil
		}))
	tools = append(tools, tool.New(sdk.Tool{Name: "test_tool_with_progress", Description: "Conformance fixture: reports progress 0, 50 and 100 of 100.", Annotations: ro("progress")},
		func(ctx context.Context, req *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, result, error) {
			token := req.Params.GetProgressToken()
			for _, p := range []float64{0, 50, 100} {
				if token != nil {
					_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: 100, Message: fmt.Sprintf("step %.0f of 100", p)})
				}
				time.Sleep(50 * time.Millisecond)
			}
			return content(&sdk.TextContent{Text: fmt.Sprint(token)}), result{OK: true}, nil
		}))
	tools = append(tools, tool.New(sdk.Tool{Name: "test_error_handling", Description: "Conformance fixture: always fails with a tool error.", Annotations: ro("error")},
		func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, result, error) {
			return nil, result{}, errors.New("This tool intentionally returns an error for testing")
		}))
	tools = append(tools, tool.New(sdk.Tool{Name: "test_sampling", Description: "Conformance fixture: asks the client's model to complete a prompt (sampling/createMessage).", Annotations: tool.OpenWorld(ro("sampling"))},
		func(ctx context.Context, req *sdk.CallToolRequest, in promptIn) (*sdk.CallToolResult, result, error) {
			res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{
				Messages:  []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: in.Prompt}}},
				MaxTokens: 100,
			})
			if err != nil {
				return nil, result{}, fmt.Errorf("sampling: %w", err)
			}
			text := "(non-text response)"
			if tc, ok := res.Content.(*sdk.TextContent); ok {
				text = tc.Text
			}
			return content(&sdk.TextContent{Text: "LLM response: " + text}), result{OK: true}, nil
		}))
	elicit := func(name, desc string, schema func(messageIn) (string, any)) {
		handler := func(ctx context.Context, req *sdk.CallToolRequest, in messageIn) (*sdk.CallToolResult, result, error) {
			msg, s := schema(in)
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: msg, RequestedSchema: s})
			if err != nil {
				return nil, result{}, fmt.Errorf("elicitation: %w", err)
			}
			return content(&sdk.TextContent{Text: fmt.Sprintf("User response: action=%s, content=%v", res.Action, res.Content)}), result{OK: true}, nil
		}
		if name == "test_elicitation" {
			tools = append(tools, tool.New(sdk.Tool{Name: name, Description: desc, Annotations: ro(name)}, handler))
			return
		}
		tools = append(tools, tool.New(sdk.Tool{Name: name, Description: desc, Annotations: ro(name)},
			func(ctx context.Context, req *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, result, error) {
				return handler(ctx, req, messageIn{})
			}))
	}
	elicit("test_elicitation", "Conformance fixture: asks the user for a username (elicitation/create).", func(in messageIn) (string, any) {
		return in.Message, map[string]any{"type": "object", "properties": map[string]any{
			"username": map[string]any{"type": "string", "description": "User's response"},
			"email":    map[string]any{"type": "string", "description": "User's email address"},
		}, "required": []string{"username", "email"}}
	})
	elicit("test_elicitation_sep1034_defaults", "Conformance fixture: elicitation whose fields carry defaults (SEP-1034).", func(messageIn) (string, any) {
		return "Please review and update the form fields with defaults", map[string]any{"type": "object", "properties": map[string]any{
			"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
			"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
			"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
			"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
			"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
		}, "required": []string{}}
	})
	elicit("test_elicitation_sep1330_enums", "Conformance fixture: elicitation with every enum form (SEP-1330).", func(messageIn) (string, any) {
		titled := func(prefix string, names ...string) []map[string]any {
			out := make([]map[string]any, len(names))
			for i, n := range names {
				out[i] = map[string]any{"const": fmt.Sprintf("%s%d", prefix, i+1), "title": n}
			}
			return out
		}
		return "Please select options from the enum fields", map[string]any{"type": "object", "properties": map[string]any{
			"untitledSingle": map[string]any{"type": "string", "description": "Select one option", "enum": []string{"option1", "option2", "option3"}},
			"titledSingle":   map[string]any{"type": "string", "description": "Select one option with titles", "oneOf": titled("value", "First Option", "Second Option", "Third Option")},
			"legacyEnum":     map[string]any{"type": "string", "description": "Select one option (legacy)", "enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
			"untitledMulti":  map[string]any{"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3, "items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
			"titledMulti":    map[string]any{"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3, "items": map[string]any{"anyOf": titled("value", "First Choice", "Second Choice", "Third Choice")}},
		}, "required": []string{}}
	})
	return tool.NewGroup("", tools...)
}

// AddPromptsAndResources adds the fixture prompts and resources to server (mcp.WithServerSetup).
func AddPromptsAndResources(server *sdk.Server) {
	registerResources(server)
	registerPrompts(server)
}

var templateID = regexp.MustCompile(`^test://template/([^/]+)/data$`)

func registerResources(server *sdk.Server) {
	text := func(uri, mime, body string) sdk.ResourceHandler {
		return func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: mime, Text: body}}}, nil
		}
	}
	server.AddResource(&sdk.Resource{Name: "static-text", Description: "Conformance fixture: a static text resource", MIMEType: "text/plain", URI: "test://static-text"},
		text("test://static-text", "text/plain", "This is the content of the static text resource."))
	server.AddResource(&sdk.Resource{Name: "static-binary", Description: "Conformance fixture: a static PNG", MIMEType: "image/png", URI: "test://static-binary"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: pngData}}}, nil
		})
	server.AddResource(&sdk.Resource{Name: "watched-resource", Description: "Conformance fixture: a resource clients can subscribe to", MIMEType: "text/plain", URI: "test://watched-resource"},
		text("test://watched-resource", "text/plain", "Watched resource content"))
	server.AddResourceTemplate(&sdk.ResourceTemplate{Name: "template", Description: "Conformance fixture: a resource template with an {id} parameter", MIMEType: "application/json", URITemplate: "test://template/{id}/data"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			m := templateID.FindStringSubmatch(req.Params.URI)
			if m == nil {
				return nil, sdk.ResourceNotFoundError(req.Params.URI)
			}
			body := fmt.Sprintf(`{"id":%q,"templateTest":true,"data":"Data for ID: %s"}`, m[1], m[1])
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: body}}}, nil
		})
}

func registerPrompts(server *sdk.Server) {
	user := func(c sdk.Content) *sdk.PromptMessage { return &sdk.PromptMessage{Role: "user", Content: c} }
	server.AddPrompt(&sdk.Prompt{Name: "test_simple_prompt", Title: "Simple prompt", Description: "Conformance fixture: a prompt without arguments"},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{user(&sdk.TextContent{Text: "This is a simple prompt for testing."})}}, nil
		})
	server.AddPrompt(&sdk.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt with arguments", Description: "Conformance fixture: a prompt with two required arguments",
		Arguments: []*sdk.PromptArgument{{Name: "arg1", Description: "First test argument", Required: true}, {Name: "arg2", Description: "Second test argument", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			a := req.Params.Arguments
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{user(&sdk.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])})}}, nil
		})
	server.AddPrompt(&sdk.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt with an embedded resource", Description: "Conformance fixture: a prompt embedding the resource named by resourceUri",
		Arguments: []*sdk.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				user(&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
				user(&sdk.TextContent{Text: "Please process the embedded resource above."}),
			}}, nil
		})
	server.AddPrompt(&sdk.Prompt{Name: "test_prompt_with_image", Title: "Prompt with an image", Description: "Conformance fixture: a prompt carrying a PNG"},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				user(&sdk.ImageContent{Data: pngData, MIMEType: "image/png"}),
				user(&sdk.TextContent{Text: "Please analyze the image above."}),
			}}, nil
		})
}

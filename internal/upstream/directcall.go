package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/jsonobj"
)

// newProtocol is the first protocol revision whose requests carry per-request _meta (SEP-2575)
// and whose results may ask for more input (multi-round-trip): go-sdk's client session handles
// those, so a session on it or later does not take the direct path.
const newProtocol = "2026-07-28"

// callToolDirect is tools/call sent on the server's stdio connection itself (stdioConn.call),
// its result read straight into the CallToolResult the hub serves. It does what go-sdk's
// ClientSession.CallTool does for a session before 2026-07-28 (the arguments as the client
// sent them, {} when there are none; the progress token in _meta; notifications/cancelled when
// the call's context ends) at a fraction of the cost: no params encoded through reflection, and
// the reply decoded once instead of five times (BenchmarkUpstreamEcho).
func callToolDirect(ctx context.Context, c *stdioConn, tool string, args json.RawMessage, progressToken any) (*sdk.CallToolResult, error) {
	params := make([]byte, 0, 64+len(tool)+len(args))
	params = append(params, `{"name":`...)
	params = strconv.AppendQuote(params, tool)
	params = append(params, `,"arguments":`...)
	if a := bytes.TrimSpace(args); len(a) == 0 || string(a) == "null" {
		params = append(params, `{}`...)
	} else {
		params = append(params, a...)
	}
	if progressToken != nil {
		tok, err := json.Marshal(progressToken)
		if err != nil {
			return nil, err
		}
		params = append(params, `,"_meta":{"progressToken":`...)
		params = append(params, tok...)
		params = append(params, '}')
	}
	params = append(params, '}')
	raw, err := c.call(ctx, "tools/call", params)
	if err != nil {
		return nil, err
	}
	return decodeToolResult(raw)
}

// decodeToolResult reads a tools/call result. The common result (text content, structured
// content, isError, _meta) is read with encoding/json; anything else (images, resources, a
// resultType, fields of later revisions) goes through go-sdk's own CallToolResult decoding, so
// what clients get never depends on which path a result took (TestDecodeToolResultMatchesSDK).
func decodeToolResult(raw json.RawMessage) (*sdk.CallToolResult, error) {
	if res, ok := decodeSimpleToolResult(raw); ok {
		return res, nil
	}
	var res sdk.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// decodeSimpleToolResult reads, without reflection, a result whose members are all ones it
// knows and whose content is text without annotations; ok is false for anything else.
func decodeSimpleToolResult(raw json.RawMessage) (res *sdk.CallToolResult, ok bool) {
	simple := true
	var content, structured, isError, meta json.RawMessage
	ok = jsonobj.Members(raw, func(k, v []byte) {
		switch string(k) {
		case "content":
			content = v
		case "structuredContent":
			structured = v
		case "isError":
			isError = v
		case "_meta":
			meta = v
		default:
			simple = false
		}
	})
	if !ok || !simple {
		return nil, false
	}
	res = &sdk.CallToolResult{}
	switch string(isError) {
	case "", "false", "null":
	case "true":
		res.IsError = true
	default:
		return nil, false
	}
	if !decodeOptional(meta, &res.Meta) {
		return nil, false
	}
	ok = jsonobj.Elements(content, func(item []byte) {
		if !simple {
			return
		}
		var typ, text, annotations, itemMeta []byte
		if !jsonobj.Members(item, func(k, v []byte) {
			switch string(k) {
			case "type":
				typ = v
			case "text":
				text = v
			case "annotations":
				annotations = v
			case "_meta":
				itemMeta = v
			default:
				simple = false
			}
		}) || string(typ) != `"text"` {
			simple = false
			return
		}
		tc := &sdk.TextContent{}
		if s, ok := jsonobj.PlainString(text); ok {
			tc.Text = s
		} else if len(text) > 0 && json.Unmarshal(text, &tc.Text) != nil {
			simple = false
			return
		}
		// Annotations go to go-sdk's decoding, whose keys are case-sensitive, unlike
		// encoding/json's (FuzzDecodeToolResult found the difference).
		if len(annotations) > 0 && string(annotations) != "null" || !decodeOptional(itemMeta, &tc.Meta) {
			simple = false
			return
		}
		res.Content = append(res.Content, tc)
	})
	if !ok || !simple {
		return nil, false
	}
	if res.Content == nil {
		res.Content = []sdk.Content{}
	}
	if s := bytes.TrimSpace(structured); len(s) > 0 && string(s) != "null" {
		res.StructuredContent = json.RawMessage(s)
	}
	return res, true
}

// decodeOptional decodes a member that may be absent or null.
func decodeOptional(v []byte, into any) bool {
	if len(v) == 0 || string(v) == "null" {
		return true
	}
	return json.Unmarshal(v, into) == nil
}

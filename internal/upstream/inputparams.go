package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
)

// A 2026-07-28 server may send an input request without params: the TypeScript SDK v2
// (@modelcontextprotocol/server 2.x) sends its roots request as {"method": "roots/list"}, as the
// schema allows (a ListRootsRequest's params are optional). go-sdk v1.8's client cannot decode
// that ("unexpected end of JSON input" from InputRequestMap.UnmarshalJSON), and the whole call
// failed with it. The hub gives such an entry empty params before go-sdk reads the message:
// in the stdio connection's decoder, and in the HTTP client's responses (JSON bodies and SSE
// events). Nothing else of the message changes.

var inputRequestsKey = []byte(`"inputRequests"`)

// fillInputRequestParams returns msg with `"params": {}` added to each entry of
// result.inputRequests that has none (or null), or msg itself when there is nothing to fill or
// it does not parse (go-sdk then reports it as it would have).
func fillInputRequestParams(msg []byte) []byte {
	if !bytes.Contains(msg, inputRequestsKey) {
		return msg
	}
	var envelope map[string]json.RawMessage
	if json.Unmarshal(msg, &envelope) != nil {
		return msg
	}
	var result map[string]json.RawMessage
	if json.Unmarshal(envelope["result"], &result) != nil {
		return msg
	}
	var reqs map[string]map[string]json.RawMessage
	if json.Unmarshal(result["inputRequests"], &reqs) != nil {
		return msg
	}
	changed := false
	for _, r := range reqs {
		if r == nil {
			continue
		}
		if p, ok := r["params"]; !ok || bytes.Equal(bytes.TrimSpace(p), []byte("null")) {
			r["params"] = json.RawMessage(`{}`)
			changed = true
		}
	}
	if !changed {
		return msg
	}
	var err error
	if result["inputRequests"], err = json.Marshal(reqs); err != nil {
		return msg
	}
	if envelope["result"], err = json.Marshal(result); err != nil {
		return msg
	}
	out, err := json.Marshal(envelope)
	if err != nil {
		return msg
	}
	return out
}

// inputParamsTransport applies fillInputRequestParams to the JSON-RPC messages of an HTTP
// server's responses.
type inputParamsTransport struct{ next http.RoundTripper }

func (t inputParamsTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		// Bounded like a stdio message: a larger body passes through as it is, unread here.
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxStdioMessage+1))
		if err != nil {
			resp.Body.Close()
			return nil, err
		}
		if len(body) > maxStdioMessage {
			resp.Body = readCloser{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
			return resp, nil
		}
		resp.Body.Close()
		body = fillInputRequestParams(body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	case "text/event-stream":
		resp.Body = &sseInputParams{src: resp.Body, r: bufio.NewReaderSize(resp.Body, 64<<10)}
	}
	return resp, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// sseInputParams passes an event stream through line by line, filling the input requests of
// `data:` lines. A line is only held until its newline, so events stream as before; a line
// longer than a stdio message is passed on unchanged as it comes, never held whole.
type sseInputParams struct {
	src     io.ReadCloser
	r       *bufio.Reader
	line    []byte // the line read so far, while it is short enough to hold
	long    bool   // the current line outgrew the bound: pass on the rest of it as it comes
	pending []byte
	err     error
}

func (s *sseInputParams) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		frag, err := s.r.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			s.err = err
		}
		ended := err == nil
		switch {
		case s.long:
			s.pending = slices.Clone(frag)
		case len(s.line)+len(frag) > maxStdioMessage:
			s.pending, s.line, s.long = slices.Concat(s.line, frag), nil, true
		default:
			s.line = append(s.line, frag...)
			if ended || s.err != nil {
				s.pending, s.line = fillDataLine(s.line), nil
			}
		}
		if ended {
			s.long = false
		}
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// fillDataLine applies fillInputRequestParams to the message of a `data:` line.
func fillDataLine(line []byte) []byte {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || !bytes.Contains(data, inputRequestsKey) {
		return line
	}
	msg := bytes.TrimRight(data, "\r\n")
	eol := data[len(msg):]
	msg = bytes.TrimSpace(msg)
	fixed := fillInputRequestParams(msg)
	if bytes.Equal(fixed, msg) {
		return line
	}
	return slices.Concat([]byte("data: "), fixed, eol)
}

func (s *sseInputParams) Close() error { return s.src.Close() }

package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
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
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		body = fillInputRequestParams(body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	case "text/event-stream":
		resp.Body = &sseInputParams{src: resp.Body, r: bufio.NewReader(resp.Body)}
	}
	return resp, nil
}

// sseInputParams passes an event stream through line by line, filling the input requests of
// `data:` lines. A line is only ever held until its newline, so events stream as before.
type sseInputParams struct {
	src     io.ReadCloser
	r       *bufio.Reader
	pending []byte
	err     error
}

func (s *sseInputParams) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		line, err := s.r.ReadBytes('\n')
		s.err = err
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok && bytes.Contains(data, inputRequestsKey) {
			trimmed := bytes.TrimRight(data, "\r\n")
			if fixed := fillInputRequestParams(bytes.TrimSpace(trimmed)); !bytes.Equal(fixed, bytes.TrimSpace(trimmed)) {
				eol := line[len("data:")+len(trimmed):]
				line = slices.Concat([]byte("data: "), fixed, eol)
			}
		}
		s.pending = line
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

func (s *sseInputParams) Close() error { return s.src.Close() }

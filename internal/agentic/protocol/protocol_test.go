package protocol

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestEnvelopeKeysAndRoundTrip(t *testing.T) {
	from := 3
	msg, err := New(TypeBuildLog, "sess-1", BuildLog{BuildID: "b", From: &from, Lines: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	msg.Channel, msg.RequestID = "build:b", "r-1"
	msg.Timestamp = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	raw, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"build_log","channel":"build:b","sessionId":"sess-1","requestId":"r-1","data":{"buildId":"b","from":3,"lines":["x"]},"timestamp":"2025-06-01T12:00:00Z"}`
	if string(raw) != want {
		t.Errorf("wire form\n got %s\nwant %s", raw, want)
	}
	var back Message
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	var l BuildLog
	if err := back.Decode(&l); err != nil || *l.From != 3 || l.Lines[0] != "x" {
		t.Errorf("decoded %+v, %v", l, err)
	}

	bare, _ := New(TypeAck, "", nil)
	if raw, _ := json.Marshal(bare); strings.Contains(string(raw), "data") || strings.Contains(string(raw), "requestId") {
		t.Errorf("empty fields not omitted: %s", raw)
	}
	if err := bare.Decode(&l); err == nil || !strings.Contains(err.Error(), "no data") {
		t.Errorf("Decode without data: %v", err)
	}
	if _, err := New(TypeBuild, "", make(chan int)); err == nil {
		t.Error("New accepted an unencodable payload")
	}
}

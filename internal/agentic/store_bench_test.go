package agentic

import (
	"fmt"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/agentic/protocol"
)

// BenchmarkStoreApplyBuildLog measures folding one live build-log frame (one
// line, with its index) into the store, the bridge's hottest path during a build.
func BenchmarkStoreApplyBuildLog(b *testing.B) {
	s := NewStore(Limits{})
	frames := make([]protocol.Message, 10_000)
	for i := range frames {
		from := i
		frames[i], _ = protocol.New(protocol.TypeBuildLog, "", protocol.BuildLog{
			BuildID: "build-1", From: &from, Lines: []string{fmt.Sprintf("step %d: compiling package ... ok", i)},
		})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%len(frames) == 0 && i > 0 {
			b.StopTimer()
			s = NewStore(Limits{})
			b.StartTimer()
		}
		if _, err := s.Apply(frames[i%len(frames)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStoreApplyChatDelta measures one streamed reply fragment.
func BenchmarkStoreApplyChatDelta(b *testing.B) {
	s := NewStore(Limits{})
	frame, _ := protocol.New(protocol.TypeChatDelta, "sess-1", protocol.ChatDelta{MessageID: "m", Content: "word "})
	final, _ := protocol.New(protocol.TypeChatMessage, "sess-1", protocol.ChatMessage{ID: "m", Role: "assistant", Content: "done"})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%200 == 199 { // end the stream now and then so the message stays reply-sized
			if _, err := s.Apply(final); err != nil {
				b.Fatal(err)
			}
			continue
		}
		if _, err := s.Apply(frame); err != nil {
			b.Fatal(err)
		}
	}
}

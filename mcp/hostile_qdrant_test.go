package mcp

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"

	"github.com/switchboard-hub/switchboard/internal/rag"
)

// hostileQdrant answers the Qdrant API with what a broken or hostile server could send: null
// entries in lists, missing results, a point without payload or id.
type hostileQdrant struct {
	qdrant.UnimplementedQdrantServer
}

func (hostileQdrant) HealthCheck(context.Context, *qdrant.HealthCheckRequest) (*qdrant.HealthCheckReply, error) {
	return &qdrant.HealthCheckReply{}, nil
}

type hostileCollections struct {
	qdrant.UnimplementedCollectionsServer
}

func (hostileCollections) List(context.Context, *qdrant.ListCollectionsRequest) (*qdrant.ListCollectionsResponse, error) {
	return &qdrant.ListCollectionsResponse{Collections: []*qdrant.CollectionDescription{nil, {Name: "hostuk-docs"}}}, nil
}

func (hostileCollections) Get(context.Context, *qdrant.GetCollectionInfoRequest) (*qdrant.GetCollectionInfoResponse, error) {
	return &qdrant.GetCollectionInfoResponse{}, nil // no result at all
}

func (hostileCollections) CollectionExists(context.Context, *qdrant.CollectionExistsRequest) (*qdrant.CollectionExistsResponse, error) {
	return &qdrant.CollectionExistsResponse{}, nil
}

type hostilePoints struct {
	qdrant.UnimplementedPointsServer
}

func (hostilePoints) Query(context.Context, *qdrant.QueryPoints) (*qdrant.QueryResponse, error) {
	return &qdrant.QueryResponse{Result: []*qdrant.ScoredPoint{nil, {}, {Payload: map[string]*qdrant.Value{"content": nil, "source": {}}}}}, nil
}

func (hostilePoints) Scroll(context.Context, *qdrant.ScrollPoints) (*qdrant.ScrollResponse, error) {
	return &qdrant.ScrollResponse{Result: []*qdrant.RetrievedPoint{nil, {}}}, nil
}

func (hostilePoints) Count(context.Context, *qdrant.CountPoints) (*qdrant.CountResponse, error) {
	return &qdrant.CountResponse{}, nil
}

// TestHostileQdrantDoesNotTakeTheHubDown: whatever a Qdrant server answers, the RAG tools return
// a result or an error and the hub keeps serving every client.
func TestHostileQdrantDoesNotTakeTheHubDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	qdrant.RegisterQdrantServer(srv, hostileQdrant{})
	qdrant.RegisterCollectionsServer(srv, hostileCollections{})
	qdrant.RegisterPointsServer(srv, hostilePoints{})
	go func() { _ = srv.Serve(ln) }() // ends with Stop
	defer srv.Stop()
	q, err := rag.NewQdrant("http://"+ln.Addr().String(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	s := newTestService(t, WithRAG(rag.Hold(rag.NewEngine(q, rag.Offline{}))))
	cs, other := connect(t, s), connect(t, s)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"rag_query", map[string]any{"question": "install"}},
		{"rag_collections", map[string]any{"show_stats": true}},
		{"rag_collections", map[string]any{}},
	} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = call(t, cs, c.tool, c.args, nil) // a result or a tool error: either is fine
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s against a hostile Qdrant did not return", c.tool)
		}
	}
	mustCall(t, other, "lang_list", map[string]any{}, nil)
	mustCall(t, cs, "lang_list", map[string]any{}, nil)
}

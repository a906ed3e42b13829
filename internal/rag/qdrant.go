package rag

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DefaultQdrantAddr is Qdrant's gRPC port on this machine (the default in docs/development.md).
const DefaultQdrantAddr = "localhost:6334"

// Qdrant stores collections in a Qdrant server through its gRPC API (github.com/qdrant/go-client).
// Each chunk is a point with a cosine vector and the payload fields of rag_query's results
// (content, source, section, category, chunkIndex) plus the source's content hash. The
// collection's embedder, model and dimension are kept in the collection's metadata.
//
// Ranking on this backend is Qdrant's vector search (cosine); the lexical half of the hybrid
// ranking is only available on the embedded store.
//
// A source is replaced by upserting its new points first (IDs derived from source, hash and
// chunk index) and then deleting its points with another hash, so a query never sees the
// source missing.
type Qdrant struct {
	addr   string
	client *qdrant.Client
}

// NewQdrant connects lazily to addr ("host:port", "http://host:port" or "https://host:port";
// empty = localhost:6334).
func NewQdrant(addr, apiKey string) (*Qdrant, error) {
	if addr == "" {
		addr = DefaultQdrantAddr
	}
	cfg := &qdrant.Config{APIKey: apiKey, SkipCompatibilityCheck: true, PoolSize: 1}
	hostport := addr
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		if err != nil {
			return nil, fmt.Errorf("url: %q is not a Qdrant address (%v); write host:port, e.g. localhost:6334", addr, err)
		}
		cfg.UseTLS = u.Scheme == "https"
		hostport = u.Host
	}
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil {
		host, portStr = hostport, "6334"
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port <= 0 || port > 65535 {
		return nil, fmt.Errorf("url: %q has no valid port; write host:port, e.g. localhost:6334", addr)
	}
	cfg.Host, cfg.Port = host, port
	c, err := qdrant.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("qdrant at %s: %w", addr, err)
	}
	return &Qdrant{addr: addr, client: c}, nil
}

// Kind implements Backend: "qdrant".
func (q *Qdrant) Kind() string { return "qdrant" }

// Location implements Backend: the server's address.
func (q *Qdrant) Location() string { return q.addr }

// Close implements Backend: it closes the gRPC connection.
func (q *Qdrant) Close() error { return q.client.Close() }

// Health checks that the server answers (for switchboard doctor); it returns the version.
func (q *Qdrant) Health(ctx context.Context) (string, error) {
	r, err := q.client.HealthCheck(ctx)
	if err != nil {
		return "", q.wrap(err)
	}
	return r.GetVersion(), nil
}

func (q *Qdrant) wrap(err error) error {
	if err == nil {
		return nil
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return &UnreachableError{What: "qdrant", URL: q.addr, Err: err}
	case codes.Unauthenticated, codes.PermissionDenied:
		return &RefusedError{URL: q.addr, Err: err}
	}
	return fmt.Errorf("qdrant at %s: %w", q.addr, err)
}

// RefusedError is a Qdrant server that refused a request for want of a valid API key.
type RefusedError struct {
	URL string
	Err error
}

// Error names the server and the key to set.
func (e *RefusedError) Error() string {
	return fmt.Sprintf("qdrant at %s refused the request (%v); set [rag] api_key", e.URL, e.Err)
}

// Unwrap returns the server's answer.
func (e *RefusedError) Unwrap() error { return e.Err }

// Collections lists collections; a collection whose details fail is listed without stats.
func (q *Qdrant) Collections(ctx context.Context) ([]CollectionInfo, error) {
	names, err := q.client.ListCollections(ctx)
	if err != nil {
		return nil, q.wrap(err)
	}
	out := make([]CollectionInfo, 0, len(names))
	for _, n := range names {
		ci := CollectionInfo{Name: n}
		if info, err := q.client.GetCollectionInfo(ctx, n); err == nil {
			ci.Points = info.GetPointsCount()
			ci.Status = strings.ToLower(info.GetStatus().String())
			ci.Meta = metaFromInfo(info)
		}
		out = append(out, ci)
	}
	return out, nil
}

func metaFromInfo(info *qdrant.CollectionInfo) Meta {
	md := info.GetConfig().GetMetadata()
	m := Meta{Embedder: md["embedder"].GetStringValue(), Model: md["model"].GetStringValue(), Dim: int(md["dim"].GetIntegerValue())}
	if m.Dim == 0 {
		m.Dim = int(info.GetConfig().GetParams().GetVectorsConfig().GetParams().GetSize())
	}
	if m.Embedder == "" {
		m.Embedder, m.Model = "unknown (created outside Switchboard)", "unknown"
	}
	return m
}

// Meta returns the collection's metadata.
func (q *Qdrant) Meta(ctx context.Context, name string) (Meta, bool, error) {
	ok, err := q.client.CollectionExists(ctx, name)
	if err != nil {
		return Meta{}, false, q.wrap(err)
	}
	if !ok {
		return Meta{}, false, nil
	}
	info, err := q.client.GetCollectionInfo(ctx, name)
	if err != nil {
		return Meta{}, false, q.wrap(err)
	}
	return metaFromInfo(info), true, nil
}

// Sources scrolls the collection's points (payload source and hash only).
func (q *Qdrant) Sources(ctx context.Context, name string) (map[string]string, error) {
	out := map[string]string{}
	var offset *qdrant.PointId
	limit := uint32(1000)
	for {
		pts, next, err := q.client.ScrollAndOffset(ctx, &qdrant.ScrollPoints{CollectionName: name, Offset: offset, Limit: &limit,
			WithPayload: qdrant.NewWithPayloadInclude("source", "hash")})
		if err != nil {
			return nil, q.wrap(err)
		}
		for _, p := range pts {
			out[p.GetPayload()["source"].GetStringValue()] = p.GetPayload()["hash"].GetStringValue()
		}
		if next == nil || len(pts) == 0 {
			return out, nil
		}
		offset = next
	}
}

var pointNamespace = uuid.MustParse("6f1c3c52-5b4e-4c56-9a55-2f0a8c1d7e01")

func pointID(source, hash string, idx int) *qdrant.PointId {
	return qdrant.NewIDUUID(uuid.NewSHA1(pointNamespace, []byte(source+"\x00"+hash+"\x00"+strconv.Itoa(idx))).String())
}

// Commit creates the collection when needed, upserts the new points of each source and then
// deletes its stale ones and the points of deleted sources.
func (q *Qdrant) Commit(ctx context.Context, name string, meta Meta, recreate bool, upserts []SourceDoc, deletes []string) error {
	exists, err := q.client.CollectionExists(ctx, name)
	if err != nil {
		return q.wrap(err)
	}
	if exists && recreate {
		if err := q.client.DeleteCollection(ctx, name); err != nil {
			return q.wrap(err)
		}
		exists = false
	}
	if !exists {
		if meta.Dim <= 0 {
			return errors.New("qdrant: cannot create a collection before the embedder's dimension is known")
		}
		err := q.client.CreateCollection(ctx, &qdrant.CreateCollection{
			CollectionName: name,
			VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: uint64(meta.Dim), Distance: qdrant.Distance_Cosine}),
			Metadata:       qdrant.NewValueMap(map[string]any{"embedder": meta.Embedder, "model": meta.Model, "dim": int64(meta.Dim), "created_by": "switchboard"}),
		})
		if err != nil {
			return q.wrap(err)
		}
	}
	wait := true
	for _, u := range upserts {
		var pts []*qdrant.PointStruct
		for i, c := range u.Chunks {
			pts = append(pts, &qdrant.PointStruct{
				Id:      pointID(u.Source, u.Hash, c.ChunkIndex),
				Vectors: qdrant.NewVectorsDense(u.Vectors[i]),
				Payload: qdrant.NewValueMap(map[string]any{"content": c.Content, "source": u.Source, "section": c.Section,
					"category": c.Category, "chunkIndex": int64(c.ChunkIndex), "hash": u.Hash}),
			})
		}
		for start := 0; start < len(pts); start += 256 {
			end := min(start+256, len(pts))
			if _, err := q.client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: name, Wait: &wait, Points: pts[start:end]}); err != nil {
				return q.wrap(err)
			}
		}
		// stale chunks of this source: same source, another hash
		_, err := q.client.Delete(ctx, &qdrant.DeletePoints{CollectionName: name, Wait: &wait, Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{
			Must:    []*qdrant.Condition{qdrant.NewMatchKeyword("source", u.Source)},
			MustNot: []*qdrant.Condition{qdrant.NewMatchKeyword("hash", u.Hash)},
		})})
		if err != nil {
			return q.wrap(err)
		}
	}
	for _, d := range deletes {
		_, err := q.client.Delete(ctx, &qdrant.DeletePoints{CollectionName: name, Wait: &wait, Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{
			Must: []*qdrant.Condition{qdrant.NewMatchKeyword("source", d)},
		})})
		if err != nil {
			return q.wrap(err)
		}
	}
	return nil
}

// Search is a cosine nearest-neighbour query.
func (q *Qdrant) Search(ctx context.Context, name string, qu Query) ([]Hit, error) {
	limit := uint64(qu.TopK)
	pts, err := q.client.Query(ctx, &qdrant.QueryPoints{CollectionName: name, Query: qdrant.NewQueryDense(qu.Vector), Limit: &limit,
		WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		return nil, q.wrap(err)
	}
	hits := make([]Hit, 0, len(pts))
	for _, p := range pts {
		pl := p.GetPayload()
		hits = append(hits, Hit{Chunk: Chunk{Source: pl["source"].GetStringValue(), Section: pl["section"].GetStringValue(),
			Category: pl["category"].GetStringValue(), ChunkIndex: int(pl["chunkIndex"].GetIntegerValue()), Content: pl["content"].GetStringValue()},
			Score: p.GetScore()})
	}
	return hits, nil
}

// Drop deletes the collection.
func (q *Qdrant) Drop(ctx context.Context, name string) error {
	return q.wrap(q.client.DeleteCollection(ctx, name))
}

// ChunkCounts counts points per source.
func (q *Qdrant) ChunkCounts(ctx context.Context, name string) (map[string]int, error) {
	out := map[string]int{}
	var offset *qdrant.PointId
	limit := uint32(1000)
	for {
		pts, next, err := q.client.ScrollAndOffset(ctx, &qdrant.ScrollPoints{CollectionName: name, Offset: offset, Limit: &limit,
			WithPayload: qdrant.NewWithPayloadInclude("source")})
		if err != nil {
			return nil, q.wrap(err)
		}
		for _, p := range pts {
			out[p.GetPayload()["source"].GetStringValue()]++
		}
		if next == nil || len(pts) == 0 {
			return out, nil
		}
		offset = next
	}
}

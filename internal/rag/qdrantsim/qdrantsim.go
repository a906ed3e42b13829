// Package qdrantsim is an in-process Qdrant server for tests and demos. Qdrant cannot run on the
// machines this project is built on, so the real client (github.com/qdrant/go-client) is tested
// against this server, which implements the gRPC service interfaces generated in that module
// (qdrant.QdrantServer, CollectionsServer, PointsServer) with the semantics Switchboard relies on:
// collections create/list/info/exists/delete (with metadata), points upsert (cosine vectors are
// normalised on insert, as Qdrant does), delete by IDs or payload filter, scroll with offsets and
// payload selectors, count, and nearest-neighbour query with cosine similarity. Filters support
// must/must_not/should with keyword, integer and boolean matches. Everything else answers
// Unimplemented, as an older server would.
package qdrantsim

import (
	"context"
	"fmt"
	"math"
	"net"
	"sort"
	"strings"
	"sync"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Server is a running simulator.
type Server struct {
	Addr   string // host:port (loopback)
	APIKey string // when set, requests must carry it in the "api-key" header

	grpc *grpc.Server
	mu   sync.Mutex
	cols map[string]*collection
}

type collection struct {
	dim      int
	distance qdrant.Distance
	metadata map[string]*qdrant.Value
	points   map[string]*point // by ID string
}

type point struct {
	id      *qdrant.PointId
	vector  []float32
	payload map[string]*qdrant.Value
}

// Start listens on 127.0.0.1 (random port) and serves until Stop.
func Start(apiKey string) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: ln.Addr().String(), APIKey: apiKey, cols: map[string]*collection{}}
	s.grpc = grpc.NewServer(grpc.UnaryInterceptor(s.auth))
	qdrant.RegisterQdrantServer(s.grpc, &health{})
	qdrant.RegisterCollectionsServer(s.grpc, &collections{s: s})
	qdrant.RegisterPointsServer(s.grpc, &points{s: s})
	go func() { _ = s.grpc.Serve(ln) }() // returns when Stop ends the server
	return s, nil
}

// Stop ends the server.
func (s *Server) Stop() { s.grpc.Stop() }

func (s *Server) auth(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if s.APIKey != "" {
		md, _ := metadata.FromIncomingContext(ctx)
		if v := md.Get("api-key"); len(v) == 0 || v[0] != s.APIKey {
			return nil, status.Error(codes.PermissionDenied, "Invalid api-key")
		}
	}
	return h(ctx, req)
}

type health struct {
	qdrant.UnimplementedQdrantServer
}

func (health) HealthCheck(context.Context, *qdrant.HealthCheckRequest) (*qdrant.HealthCheckReply, error) {
	return &qdrant.HealthCheckReply{Title: "qdrant - vector search engine", Version: "1.17.1"}, nil
}

type collections struct {
	qdrant.UnimplementedCollectionsServer
	s *Server
}

func notFound(name string) error {
	return status.Errorf(codes.NotFound, "Not found: Collection `%s` doesn't exist!", name)
}

func (c *collections) Create(_ context.Context, r *qdrant.CreateCollection) (*qdrant.CollectionOperationResponse, error) {
	params := r.GetVectorsConfig().GetParams()
	if params == nil || params.GetSize() == 0 {
		return nil, status.Error(codes.InvalidArgument, "Wrong input: vectors config with a size is required")
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if _, ok := c.s.cols[r.GetCollectionName()]; ok {
		return nil, status.Errorf(codes.AlreadyExists, "Wrong input: Collection `%s` already exists!", r.GetCollectionName())
	}
	c.s.cols[r.GetCollectionName()] = &collection{dim: int(params.GetSize()), distance: params.GetDistance(), metadata: r.GetMetadata(), points: map[string]*point{}}
	return &qdrant.CollectionOperationResponse{Result: true}, nil
}

func (c *collections) List(context.Context, *qdrant.ListCollectionsRequest) (*qdrant.ListCollectionsResponse, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	out := &qdrant.ListCollectionsResponse{}
	for n := range c.s.cols {
		out.Collections = append(out.Collections, &qdrant.CollectionDescription{Name: n})
	}
	sort.Slice(out.Collections, func(a, b int) bool { return out.Collections[a].Name < out.Collections[b].Name })
	return out, nil
}

func (c *collections) Get(_ context.Context, r *qdrant.GetCollectionInfoRequest) (*qdrant.GetCollectionInfoResponse, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	col, ok := c.s.cols[r.GetCollectionName()]
	if !ok {
		return nil, notFound(r.GetCollectionName())
	}
	n := uint64(len(col.points))
	return &qdrant.GetCollectionInfoResponse{Result: &qdrant.CollectionInfo{
		Status:      qdrant.CollectionStatus_Green,
		PointsCount: &n,
		Config: &qdrant.CollectionConfig{
			Params:   &qdrant.CollectionParams{VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: uint64(col.dim), Distance: col.distance})},
			Metadata: col.metadata,
		},
	}}, nil
}

func (c *collections) CollectionExists(_ context.Context, r *qdrant.CollectionExistsRequest) (*qdrant.CollectionExistsResponse, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	_, ok := c.s.cols[r.GetCollectionName()]
	return &qdrant.CollectionExistsResponse{Result: &qdrant.CollectionExists{Exists: ok}}, nil
}

func (c *collections) Delete(_ context.Context, r *qdrant.DeleteCollection) (*qdrant.CollectionOperationResponse, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	_, ok := c.s.cols[r.GetCollectionName()]
	delete(c.s.cols, r.GetCollectionName())
	return &qdrant.CollectionOperationResponse{Result: ok}, nil
}

type points struct {
	qdrant.UnimplementedPointsServer
	s *Server
}

func idKey(id *qdrant.PointId) string {
	if u := id.GetUuid(); u != "" {
		return "u:" + strings.ToLower(u)
	}
	return fmt.Sprintf("n:%020d", id.GetNum())
}

func (p *points) col(name string) (*collection, error) {
	col, ok := p.s.cols[name]
	if !ok {
		return nil, notFound(name)
	}
	return col, nil
}

func completed() *qdrant.PointsOperationResponse {
	return &qdrant.PointsOperationResponse{Result: &qdrant.UpdateResult{Status: qdrant.UpdateStatus_Completed}}
}

func denseOf(v *qdrant.Vectors) []float32 {
	vec := v.GetVector()
	if d := vec.GetDense(); d != nil {
		return d.GetData()
	}
	return vec.GetData() //nolint:staticcheck // older clients send the deprecated field
}

func (p *points) Upsert(_ context.Context, r *qdrant.UpsertPoints) (*qdrant.PointsOperationResponse, error) {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	col, err := p.col(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	staged := map[string]*point{}
	for _, pt := range r.GetPoints() {
		v := append([]float32(nil), denseOf(pt.GetVectors())...)
		if len(v) != col.dim {
			return nil, status.Errorf(codes.InvalidArgument, "Wrong input: Vector dimension error: expected dim: %d, got %d", col.dim, len(v))
		}
		if col.distance == qdrant.Distance_Cosine {
			normalize(v)
		}
		staged[idKey(pt.GetId())] = &point{id: pt.GetId(), vector: v, payload: pt.GetPayload()}
	}
	for k, v := range staged {
		col.points[k] = v
	}
	return completed(), nil
}

func (p *points) Delete(_ context.Context, r *qdrant.DeletePoints) (*qdrant.PointsOperationResponse, error) {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	col, err := p.col(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	sel := r.GetPoints()
	if ids := sel.GetPoints(); ids != nil {
		for _, id := range ids.GetIds() {
			delete(col.points, idKey(id))
		}
		return completed(), nil
	}
	f := sel.GetFilter()
	for k, pt := range col.points {
		ok, err := matches(f, pt)
		if err != nil {
			return nil, err
		}
		if ok {
			delete(col.points, k)
		}
	}
	return completed(), nil
}

func (p *points) Count(_ context.Context, r *qdrant.CountPoints) (*qdrant.CountResponse, error) {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	col, err := p.col(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	var n uint64
	for _, pt := range col.points {
		ok, err := matches(r.GetFilter(), pt)
		if err != nil {
			return nil, err
		}
		if ok {
			n++
		}
	}
	return &qdrant.CountResponse{Result: &qdrant.CountResult{Count: n}}, nil
}

func selectPayload(sel *qdrant.WithPayloadSelector, pl map[string]*qdrant.Value) map[string]*qdrant.Value {
	if sel == nil {
		return nil
	}
	if inc := sel.GetInclude(); inc != nil {
		out := map[string]*qdrant.Value{}
		for _, f := range inc.GetFields() {
			if v, ok := pl[f]; ok {
				out[f] = v
			}
		}
		return out
	}
	if exc := sel.GetExclude(); exc != nil {
		out := map[string]*qdrant.Value{}
		for k, v := range pl {
			out[k] = v
		}
		for _, f := range exc.GetFields() {
			delete(out, f)
		}
		return out
	}
	if sel.GetEnable() {
		return pl
	}
	return nil
}

func (p *points) Scroll(_ context.Context, r *qdrant.ScrollPoints) (*qdrant.ScrollResponse, error) {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	col, err := p.col(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(col.points))
	for k := range col.points {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	limit := int(r.GetLimit())
	if limit == 0 {
		limit = 10
	}
	out := &qdrant.ScrollResponse{}
	start := ""
	if r.Offset != nil {
		start = idKey(r.GetOffset())
	}
	for _, k := range keys {
		if k < start {
			continue
		}
		pt := col.points[k]
		ok, err := matches(r.GetFilter(), pt)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if len(out.Result) == limit {
			out.NextPageOffset = pt.id
			break
		}
		out.Result = append(out.Result, &qdrant.RetrievedPoint{Id: pt.id, Payload: selectPayload(r.GetWithPayload(), pt.payload)})
	}
	return out, nil
}

func (p *points) Query(_ context.Context, r *qdrant.QueryPoints) (*qdrant.QueryResponse, error) {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	col, err := p.col(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	dense := r.GetQuery().GetNearest().GetDense()
	if dense == nil {
		return nil, status.Error(codes.Unimplemented, "qdrantsim: only nearest queries with a dense vector are implemented")
	}
	q := append([]float32(nil), dense.GetData()...)
	if len(q) != col.dim {
		return nil, status.Errorf(codes.InvalidArgument, "Wrong input: Vector dimension error: expected dim: %d, got %d", col.dim, len(q))
	}
	if col.distance == qdrant.Distance_Cosine {
		normalize(q)
	}
	type scored struct {
		pt    *point
		score float32
		key   string
	}
	var all []scored
	for k, pt := range col.points {
		ok, err := matches(r.GetFilter(), pt)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		var s float32
		for i, x := range pt.vector {
			s += x * q[i]
		}
		all = append(all, scored{pt, s, k})
	}
	sort.Slice(all, func(a, b int) bool {
		if all[a].score != all[b].score {
			return all[a].score > all[b].score
		}
		return all[a].key < all[b].key
	})
	limit := int(r.GetLimit())
	if limit == 0 {
		limit = 10
	}
	if len(all) > limit {
		all = all[:limit]
	}
	out := &qdrant.QueryResponse{}
	for _, s := range all {
		out.Result = append(out.Result, &qdrant.ScoredPoint{Id: s.pt.id, Score: s.score, Payload: selectPayload(r.GetWithPayload(), s.pt.payload)})
	}
	return out, nil
}

func normalize(v []float32) {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
}

// matches evaluates a filter (nil matches everything).
func matches(f *qdrant.Filter, pt *point) (bool, error) {
	if f == nil {
		return true, nil
	}
	for _, c := range f.GetMust() {
		ok, err := cond(c, pt)
		if err != nil || !ok {
			return false, err
		}
	}
	for _, c := range f.GetMustNot() {
		ok, err := cond(c, pt)
		if err != nil || ok {
			return false, err
		}
	}
	if len(f.GetShould()) > 0 {
		for _, c := range f.GetShould() {
			ok, err := cond(c, pt)
			if err != nil {
				return false, err
			}
			if ok {
				return true, nil
			}
		}
		return false, nil
	}
	return true, nil
}

func cond(c *qdrant.Condition, pt *point) (bool, error) {
	if f := c.GetFilter(); f != nil {
		return matches(f, pt)
	}
	fc := c.GetField()
	if fc == nil || fc.GetMatch() == nil {
		return false, status.Error(codes.Unimplemented, "qdrantsim: only field match conditions are implemented")
	}
	v := pt.payload[fc.GetKey()]
	m := fc.GetMatch()
	switch mv := m.GetMatchValue().(type) {
	case *qdrant.Match_Keyword:
		return v != nil && v.GetStringValue() == mv.Keyword, nil
	case *qdrant.Match_Integer:
		return v != nil && v.GetIntegerValue() == mv.Integer, nil
	case *qdrant.Match_Boolean:
		return v != nil && v.GetBoolValue() == mv.Boolean, nil
	}
	return false, status.Error(codes.Unimplemented, "qdrantsim: only keyword, integer and boolean matches are implemented")
}

package ml

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// InfluxDB 1.x defaults (the documented ones).
const (
	DefaultInfluxURL = "http://localhost:8086"
	DefaultInfluxDB  = "lem"
)

// Influx is a minimal InfluxDB 1.x HTTP API client: /ping, /query and /write.
type Influx struct {
	URL    string
	DB     string
	client *http.Client
}

// NewInflux returns a client; empty arguments take the defaults.
func NewInflux(rawURL, db string) (*Influx, error) {
	if rawURL == "" {
		rawURL = DefaultInfluxURL
	}
	if db == "" {
		db = DefaultInfluxDB
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("influx_url: %q is not an http(s) URL; write it like %s", rawURL, DefaultInfluxURL)
	}
	if strings.ContainsAny(db, "\"\n\\") {
		return nil, fmt.Errorf("influx_db: %q contains quotes, backslashes or newlines; use a plain database name like lem", db)
	}
	return &Influx{URL: strings.TrimRight(u.String(), "/"), DB: db, client: &http.Client{Timeout: 10 * time.Second}}, nil
}

// Series is one result series of an InfluxQL statement.
type Series struct {
	Name    string          `json:"name"`
	Columns []string        `json:"columns"`
	Values  [][]interface{} `json:"values"`
}

type queryResponse struct {
	Results []struct {
		StatementID int      `json:"statement_id"`
		Series      []Series `json:"series"`
		Error       string   `json:"error"`
	} `json:"results"`
	Error string `json:"error"`
}

func (c *Influx) unreachable(err error) error {
	return fmt.Errorf("influx_url: InfluxDB at %s is unreachable: %v; start influxd or pass influx_url", c.URL, unwrapURLError(err))
}

// Ping checks the server (/ping answers 204 with the version in a header) and returns the version.
func (c *Influx) Ping(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/ping", nil)
	if err != nil {
		return "", err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return "", c.unreachable(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("influx_url: %s/ping answered HTTP %d; is this an InfluxDB 1.x server?", c.URL, resp.StatusCode)
	}
	return resp.Header.Get("X-Influxdb-Version"), nil
}

// Query runs InfluxQL statements (separated by ';') against the database and returns each
// statement's series. A statement error fails the whole query.
func (c *Influx) Query(ctx context.Context, q string) ([][]Series, error) {
	form := url.Values{"q": {q}, "db": {c.DB}, "epoch": {"ms"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/query", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, c.unreachable(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, c.unreachable(err)
	}
	var qr queryResponse
	if err := json.Unmarshal(raw, &qr); err != nil {
		return nil, fmt.Errorf("influx_url: %s/query answered HTTP %d with non-JSON %.200q; is this an InfluxDB 1.x server?", c.URL, resp.StatusCode, raw)
	}
	if qr.Error != "" {
		return nil, fmt.Errorf("influxdb %s: %s", c.URL, qr.Error)
	}
	out := make([][]Series, len(qr.Results))
	for i, r := range qr.Results {
		if r.Error != "" {
			return nil, fmt.Errorf("influxdb %s: %s", c.URL, r.Error)
		}
		out[i] = r.Series
	}
	return out, nil
}

// Point is one line-protocol point.
type Point struct {
	Measurement string
	Tags        map[string]string
	Fields      map[string]any // float64, int, string or bool
	Time        time.Time
}

// Line encodes the point in line protocol with millisecond precision.
func (p Point) Line() string {
	var b strings.Builder
	b.WriteString(escapeKey(p.Measurement, false))
	tagKeys := make([]string, 0, len(p.Tags))
	for k := range p.Tags {
		tagKeys = append(tagKeys, k)
	}
	sort.Strings(tagKeys)
	for _, k := range tagKeys {
		if p.Tags[k] == "" {
			continue
		}
		b.WriteString("," + escapeKey(k, true) + "=" + escapeKey(p.Tags[k], true))
	}
	fieldKeys := make([]string, 0, len(p.Fields))
	for k := range p.Fields {
		fieldKeys = append(fieldKeys, k)
	}
	sort.Strings(fieldKeys)
	for i, k := range fieldKeys {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(escapeKey(k, true) + "=")
		switch v := p.Fields[k].(type) {
		case int:
			b.WriteString(strconv.Itoa(v) + "i")
		case int64:
			b.WriteString(strconv.FormatInt(v, 10) + "i")
		case float64:
			b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
		case bool:
			b.WriteString(strconv.FormatBool(v))
		default:
			s := strings.ReplaceAll(fmt.Sprint(v), `\`, `\\`)
			b.WriteString(`"` + strings.ReplaceAll(s, `"`, `\"`) + `"`)
		}
	}
	b.WriteString(" " + strconv.FormatInt(p.Time.UnixMilli(), 10))
	return b.String()
}

func escapeKey(s string, equals bool) string {
	r := strings.NewReplacer(",", `\,`, " ", `\ `, "\n", " ")
	s = r.Replace(s)
	if equals {
		s = strings.ReplaceAll(s, "=", `\=`)
	}
	return s
}

// Write stores points (creating the database once if the server says it does not exist).
func (c *Influx) Write(ctx context.Context, pts ...Point) error {
	var body bytes.Buffer
	for _, p := range pts {
		body.WriteString(p.Line() + "\n")
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/write?"+url.Values{"db": {c.DB}, "precision": {"ms"}}.Encode(), bytes.NewReader(body.Bytes()))
		if err != nil {
			return err
		}
		resp, err := c.client.Do(req)
		if err != nil {
			return c.unreachable(err)
		}
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			return nil
		}
		msg := serverError(raw)
		if attempt == 0 && resp.StatusCode == http.StatusNotFound && strings.Contains(msg, "database not found") {
			if _, err := c.Query(ctx, `CREATE DATABASE "`+c.DB+`"`); err != nil {
				return err
			}
			continue
		}
		return fmt.Errorf("influxdb %s: write: HTTP %d: %s", c.URL, resp.StatusCode, msg)
	}
}

// MeasurementStatus is one measurement in the status report.
type MeasurementStatus struct {
	Name        string
	LatestTime  time.Time
	Latest      []Field // columns of the latest point (tags and fields), time excluded
	PointsHour  int
	PointsDay   int
	LossTrend   string // empty when the measurement has no loss field
	LossField   string
	LossFirst   float64
	LossLast    float64
	LossMin     float64
	LossSamples int
}

// Field is one column of a point.
type Field struct {
	Key   string
	Value any
}

// StatusReport is what ml_status shows.
type StatusReport struct {
	URL, DB, Version string
	Measurements     []MeasurementStatus
}

func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// Status reads every measurement's latest point, its counts over the last hour and day, and the
// loss trend of measurements that have a loss field.
func (c *Influx) Status(ctx context.Context) (StatusReport, error) {
	rep := StatusReport{URL: c.URL, DB: c.DB}
	v, err := c.Ping(ctx)
	if err != nil {
		return rep, err
	}
	rep.Version = v
	res, err := c.Query(ctx, "SHOW DATABASES;SHOW MEASUREMENTS")
	if err != nil && !strings.Contains(err.Error(), "database not found") {
		return rep, err
	}
	found := false
	if err == nil {
		for _, s := range res[0] {
			for _, row := range s.Values {
				found = found || (len(row) > 0 && fmt.Sprint(row[0]) == c.DB)
			}
		}
	}
	if !found {
		return rep, fmt.Errorf("influx_db: database %q does not exist on %s; nothing has been recorded yet (pass influx_db to read another)", c.DB, c.URL)
	}
	var names []string
	for _, s := range res[1] {
		for _, row := range s.Values {
			if len(row) > 0 {
				names = append(names, fmt.Sprint(row[0]))
			}
		}
	}
	if len(names) == 0 {
		return rep, nil
	}
	var q strings.Builder
	for _, n := range names {
		id := quoteIdent(n)
		fmt.Fprintf(&q, "SELECT * FROM %s ORDER BY time DESC LIMIT 1;SELECT COUNT(*) FROM %s WHERE time > now() - 1h;SELECT COUNT(*) FROM %s WHERE time > now() - 1d;", id, id, id)
	}
	res, err = c.Query(ctx, strings.TrimSuffix(q.String(), ";"))
	if err != nil {
		return rep, err
	}
	for i, n := range names {
		m := MeasurementStatus{Name: n}
		if latest := res[3*i]; len(latest) > 0 && len(latest[0].Values) > 0 {
			row := latest[0].Values[0]
			for j, col := range latest[0].Columns {
				if j >= len(row) {
					break
				}
				if col == "time" {
					m.LatestTime = msTime(row[j])
					continue
				}
				if row[j] == nil {
					continue
				}
				m.Latest = append(m.Latest, Field{Key: col, Value: row[j]})
				if m.LossField == "" && strings.Contains(strings.ToLower(col), "loss") {
					if _, ok := row[j].(float64); ok {
						m.LossField = col
					}
				}
			}
		}
		m.PointsHour, m.PointsDay = maxCount(res[3*i+1]), maxCount(res[3*i+2])
		rep.Measurements = append(rep.Measurements, m)
	}
	for i := range rep.Measurements {
		m := &rep.Measurements[i]
		if m.LossField == "" {
			continue
		}
		r, err := c.Query(ctx, fmt.Sprintf("SELECT %s FROM %s ORDER BY time DESC LIMIT 200", quoteIdent(m.LossField), quoteIdent(m.Name)))
		if err != nil {
			return rep, err
		}
		var vals []float64
		if len(r) > 0 && len(r[0]) > 0 {
			for _, row := range r[0][0].Values {
				if len(row) > 1 {
					if f, ok := row[1].(float64); ok {
						vals = append(vals, f)
					}
				}
			}
		}
		for l, h := 0, len(vals)-1; l < h; l, h = l+1, h-1 { // oldest first
			vals[l], vals[h] = vals[h], vals[l]
		}
		m.LossTrend, m.LossSamples = LossTrend(vals), len(vals)
		if len(vals) > 0 {
			m.LossFirst, m.LossLast, m.LossMin = vals[0], vals[len(vals)-1], vals[0]
			for _, v := range vals {
				m.LossMin = min(m.LossMin, v)
			}
		}
	}
	return rep, nil
}

// LossTrend compares the mean of the older half of a series with the newer half: "decreasing"
// or "increasing" when they differ by more than 2%, else "flat"; "insufficient data" below 4 points.
func LossTrend(vals []float64) string {
	if len(vals) < 4 {
		return "insufficient data"
	}
	half := len(vals) / 2
	mean := func(x []float64) float64 {
		s := 0.0
		for _, v := range x {
			s += v
		}
		return s / float64(len(x))
	}
	a, b := mean(vals[:half]), mean(vals[half:])
	switch {
	case a == 0 && b == 0:
		return "flat"
	case b < a*0.98:
		return "decreasing"
	case b > a*1.02:
		return "increasing"
	}
	return "flat"
}

func msTime(v any) time.Time {
	if f, ok := v.(float64); ok {
		return time.UnixMilli(int64(f)).UTC()
	}
	return time.Time{}
}

func maxCount(ss []Series) int {
	best := 0
	for _, s := range ss {
		for _, row := range s.Values {
			for j, v := range row {
				if j < len(s.Columns) && s.Columns[j] == "time" {
					continue
				}
				if f, ok := v.(float64); ok && int(f) > best {
					best = int(f)
				}
			}
		}
	}
	return best
}

// Format renders the report as the multi-line text ml_status returns.
func (r StatusReport) Format() string {
	var b strings.Builder
	ver := r.Version
	if ver == "" {
		ver = "unknown version"
	}
	fmt.Fprintf(&b, "InfluxDB %s (%s), database %s: %d measurement(s)\n", r.URL, ver, r.DB, len(r.Measurements))
	if len(r.Measurements) == 0 {
		b.WriteString("no measurements yet: nothing has been written to this database\n")
	}
	for _, m := range r.Measurements {
		fmt.Fprintf(&b, "\n%s\n", m.Name)
		if m.LatestTime.IsZero() {
			b.WriteString("  latest: none\n")
		} else {
			parts := make([]string, len(m.Latest))
			for i, f := range m.Latest {
				parts[i] = f.Key + "=" + formatValue(f.Value)
			}
			fmt.Fprintf(&b, "  latest: %s (%s ago) %s\n", m.LatestTime.Format(time.RFC3339), time.Since(m.LatestTime).Round(time.Second), strings.Join(parts, " "))
		}
		fmt.Fprintf(&b, "  points: %d in the last hour, %d in the last day\n", m.PointsHour, m.PointsDay)
		if m.LossField != "" {
			fmt.Fprintf(&b, "  %s trend: %s (%s → %s, min %s over %d points)\n", m.LossField, m.LossTrend,
				formatValue(m.LossFirst), formatValue(m.LossLast), formatValue(m.LossMin), m.LossSamples)
		}
	}
	return b.String()
}

func formatValue(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', 6, 64)
	case string:
		return strconv.Quote(x)
	}
	return fmt.Sprint(v)
}

// ErrNoInflux is returned when no InfluxDB is configured for writing.
var ErrNoInflux = errors.New("no InfluxDB configured")

package main

import (
	"encoding/json"
	"fmt"
	"strings"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

const (
	maxPage     = 1000
	maxPageSize = 20
)

// services are the rows of the dashboard.
var services = []string{
	"api-gateway", "auth", "billing", "catalog", "checkout", "email",
	"inventory", "notifications", "orders", "payments", "recommendations",
	"search", "shipping", "users",
}

// Row is one service's metrics.
type Row struct {
	Service  string `json:"service"`
	Requests int    `json:"requests"`
	Errors   int    `json:"errors"`
	P95ms    int    `json:"p95_ms"`
}

// Metrics is the structured result of service_metrics and metrics_page.
type Metrics struct {
	Page     int   `json:"page"`
	Pages    int   `json:"pages"`
	PageSize int   `json:"page_size"`
	Seed     int   `json:"seed"`
	Total    int   `json:"total"`
	Rows     []Row `json:"rows"`
}

func metricsSchema() wasmcp.Schema {
	return wasmcp.Object(
		wasmcp.Required("page", wasmcp.Integer("")),
		wasmcp.Required("pages", wasmcp.Integer("")),
		wasmcp.Required("page_size", wasmcp.Integer("")),
		wasmcp.Required("seed", wasmcp.Integer("")),
		wasmcp.Required("total", wasmcp.Integer("Services in all pages.")),
		wasmcp.Required("rows", wasmcp.Array(wasmcp.Object(
			wasmcp.Required("service", wasmcp.String("")),
			wasmcp.Required("requests", wasmcp.Integer("")),
			wasmcp.Required("errors", wasmcp.Integer("")),
			wasmcp.Required("p95_ms", wasmcp.Integer("95th percentile latency, ms.")),
		), "")),
	)
}

// metricsTool answers both tools: the page asked for, of the sample seed.
func metricsTool(c *wasmcp.Context, args json.RawMessage) (*wasmcp.Result, error) {
	in := struct {
		Page     int  `json:"page"`
		PageSize int  `json:"page_size"`
		Seed     *int `json:"seed"`
	}{Page: 1, PageSize: 5}
	if err := json.Unmarshal(args, &in); err != nil {
		return wasmcp.ErrorResult("arguments: " + err.Error()), nil
	}
	seed := 1
	if in.Seed != nil {
		seed = *in.Seed
	}
	m := sample(in.Page, in.PageSize, seed)
	return &wasmcp.Result{
		Content:           []wasmcp.Content{wasmcp.Text(m.table())},
		StructuredContent: m,
	}, nil
}

// sample computes page of the metrics sample seed: deterministic, so a
// page and a seed always give the same numbers.
func sample(page, size, seed int) Metrics {
	size = min(max(size, 1), maxPageSize)
	pages := (len(services) + size - 1) / size
	page = min(max(page, 1), pages)
	m := Metrics{Page: page, Pages: pages, PageSize: size, Seed: seed, Total: len(services), Rows: []Row{}}
	for i := (page - 1) * size; i < min(page*size, len(services)); i++ {
		x := uint64(seed)*0x9E3779B97F4A7C15 + uint64(i+1)*0xBF58476D1CE4E5B9
		next := func(n uint64) int {
			x ^= x >> 31
			x *= 0x94D049BB133111EB
			x ^= x >> 29
			return int(x % n)
		}
		req := 500 + next(9500)
		m.Rows = append(m.Rows, Row{Service: services[i], Requests: req, Errors: req * next(40) / 1000, P95ms: 40 + next(360)})
	}
	return m
}

// table is the text fallback: the page as an aligned text table.
func (m Metrics) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Service metrics, page %d of %d (sample %d)\n", m.Page, m.Pages, m.Seed)
	fmt.Fprintf(&b, "%-16s %9s %7s %7s\n", "service", "requests", "errors", "p95 ms")
	for _, r := range m.Rows {
		fmt.Fprintf(&b, "%-16s %9d %7d %7d\n", r.Service, r.Requests, r.Errors, r.P95ms)
	}
	return strings.TrimRight(b.String(), "\n")
}

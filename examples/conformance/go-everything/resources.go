package main

import (
	"encoding/json"
	"fmt"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

func addResources(p *wasmcp.Plugin) {
	p.AddResource(wasmcp.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource.", MIMEType: "text/plain"},
		func(*wasmcp.Context, *wasmcp.ResourceRequest) ([]wasmcp.ResourceContents, error) {
			return []wasmcp.ResourceContents{wasmcp.TextContents("test://static-text", "text/plain", "This is the content of the static text resource.")}, nil
		})
	p.AddResource(wasmcp.Resource{URI: watchedURI, Name: "watched-resource", Description: "A resource to subscribe to; test_update_watched_resource changes it.", MIMEType: "text/plain"},
		func(c *wasmcp.Context, r *wasmcp.ResourceRequest) ([]wasmcp.ResourceContents, error) {
			n, err := revision(c)
			if err != nil {
				return nil, err
			}
			return []wasmcp.ResourceContents{wasmcp.TextContents(r.URI, "text/plain", fmt.Sprintf("Watched resource content, revision %d.", n))}, nil
		})
	p.AddResourceTemplate(wasmcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", Description: "A templated resource: data for one id.", MIMEType: "application/json"},
		func(_ *wasmcp.Context, r *wasmcp.ResourceRequest) ([]wasmcp.ResourceContents, error) {
			id := r.Vars["id"]
			data, err := json.Marshal(struct {
				ID           string `json:"id"`
				TemplateTest bool   `json:"templateTest"`
				Data         string `json:"data"`
			}{id, true, "Data for ID: " + id})
			if err != nil {
				return nil, err
			}
			return []wasmcp.ResourceContents{wasmcp.TextContents(r.URI, "application/json", string(data))}, nil
		})
	p.AddResourceCompletion("test://template/{id}/data", func(_ *wasmcp.Context, r *wasmcp.CompleteRequest) (*wasmcp.Completion, error) {
		return wasmcp.CompleteFrom([]string{"1", "2", "3", "123"}, r.Value), nil
	})
}

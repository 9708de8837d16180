package wasmcp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Content types (the "type" field of a content block).
const (
	TypeText         = "text"
	TypeImage        = "image"
	TypeAudio        = "audio"
	TypeResource     = "resource"
	TypeResourceLink = "resource_link"
)

// Content is one content block of a tool result or prompt message (MCP
// ContentBlock). Build it with [Text], [Image], [Audio],
// [EmbeddedResource] or [ResourceLink]; it marshals to the MCP shape of its
// Type.
type Content struct {
	// Type is one of the Type* constants.
	Type string
	// Text is the text of a text block.
	Text string
	// Data is the raw (not base64) payload of an image or audio block.
	Data []byte
	// MIMEType is the media type of an image or audio block.
	MIMEType string
	// Resource is the embedded resource of a resource block.
	Resource *ResourceContents
	// Link is the resource a resource_link block points to.
	Link *Resource
	// Annotations are optional hints about the block.
	Annotations *Annotations
	// Meta is the optional _meta object.
	Meta map[string]any
}

// Text returns a text content block.
func Text(text string) Content { return Content{Type: TypeText, Text: text} }

// Image returns an image content block; data is the raw image (it is
// base64-encoded on the wire).
func Image(data []byte, mimeType string) Content {
	return Content{Type: TypeImage, Data: data, MIMEType: mimeType}
}

// Audio returns an audio content block; data is the raw audio.
func Audio(data []byte, mimeType string) Content {
	return Content{Type: TypeAudio, Data: data, MIMEType: mimeType}
}

// EmbeddedResource returns a resource content block holding the
// resource's contents.
func EmbeddedResource(rc ResourceContents) Content {
	return Content{Type: TypeResource, Resource: &rc}
}

// ResourceLink returns a resource_link content block pointing to r, which
// need not be listed by the plugin.
func ResourceLink(r Resource) Content {
	return Content{Type: TypeResourceLink, Link: &r}
}

// MarshalJSON encodes c in the MCP shape of its type.
func (c Content) MarshalJSON() ([]byte, error) {
	type common struct {
		Annotations *Annotations   `json:"annotations,omitempty"`
		Meta        map[string]any `json:"_meta,omitempty"`
	}
	switch c.Type {
	case TypeText:
		return marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
			common
		}{c.Type, c.Text, common{c.Annotations, c.Meta}})
	case TypeImage, TypeAudio:
		return marshal(struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MIMEType string `json:"mimeType"`
			common
		}{c.Type, base64.StdEncoding.EncodeToString(c.Data), c.MIMEType, common{c.Annotations, c.Meta}})
	case TypeResource:
		if c.Resource == nil {
			return nil, errors.New("wasmcp: resource content without Resource")
		}
		return marshal(struct {
			Type     string            `json:"type"`
			Resource *ResourceContents `json:"resource"`
			common
		}{c.Type, c.Resource, common{c.Annotations, c.Meta}})
	case TypeResourceLink:
		if c.Link == nil {
			return nil, errors.New("wasmcp: resource_link content without Link")
		}
		l := *c.Link
		if c.Annotations != nil {
			l.Annotations = c.Annotations
		}
		if c.Meta != nil {
			l.Meta = c.Meta
		}
		return marshal(struct {
			Type string `json:"type"`
			Resource
		}{c.Type, l})
	}
	return nil, fmt.Errorf("wasmcp: unknown content type %q", c.Type)
}

// UnmarshalJSON decodes an MCP content block. Unknown types keep only
// Type (and Text, Annotations and Meta when present).
func (c *Content) UnmarshalJSON(b []byte) error {
	var w struct {
		Type        string            `json:"type"`
		Text        string            `json:"text"`
		Data        string            `json:"data"`
		MIMEType    string            `json:"mimeType"`
		Resource    *ResourceContents `json:"resource"`
		Annotations *Annotations      `json:"annotations"`
		Meta        map[string]any    `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = Content{Type: w.Type, Text: w.Text, MIMEType: w.MIMEType, Resource: w.Resource, Annotations: w.Annotations, Meta: w.Meta}
	switch w.Type {
	case TypeImage, TypeAudio:
		data, err := base64.StdEncoding.DecodeString(w.Data)
		if err != nil {
			return fmt.Errorf("wasmcp: %s content: invalid base64 data: %w", w.Type, err)
		}
		c.Data = data
	case TypeResourceLink:
		var r Resource
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		c.Link = &r
		c.MIMEType = ""
	}
	return nil
}

// ResourceContents is the content of a resource (MCP TextResourceContents
// or BlobResourceContents): Blob when not nil, else Text.
type ResourceContents struct {
	// URI identifies the contents (usually the requested URI).
	URI string
	// MIMEType is the optional media type.
	MIMEType string
	// Text is the content of a text resource.
	Text string
	// Blob is the raw content of a binary resource (base64 on the wire).
	Blob []byte
	// Meta is the optional _meta object.
	Meta map[string]any
}

// TextContents returns text contents of the resource uri.
func TextContents(uri, mimeType, text string) ResourceContents {
	return ResourceContents{URI: uri, MIMEType: mimeType, Text: text}
}

// BlobContents returns binary contents of the resource uri (base64 on the
// wire).
func BlobContents(uri, mimeType string, data []byte) ResourceContents {
	if data == nil {
		data = []byte{}
	}
	return ResourceContents{URI: uri, MIMEType: mimeType, Blob: data}
}

type resourceContentsJSON struct {
	URI      string         `json:"uri"`
	MIMEType string         `json:"mimeType,omitempty"`
	Text     *string        `json:"text,omitempty"`
	Blob     *string        `json:"blob,omitempty"`
	Meta     map[string]any `json:"_meta,omitempty"`
}

// MarshalJSON encodes rc as text or blob contents.
func (rc ResourceContents) MarshalJSON() ([]byte, error) {
	w := resourceContentsJSON{URI: rc.URI, MIMEType: rc.MIMEType, Meta: rc.Meta}
	if rc.Blob != nil {
		s := base64.StdEncoding.EncodeToString(rc.Blob)
		w.Blob = &s
	} else {
		w.Text = &rc.Text
	}
	return marshal(w)
}

// UnmarshalJSON decodes text or blob contents.
func (rc *ResourceContents) UnmarshalJSON(b []byte) error {
	var w resourceContentsJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*rc = ResourceContents{URI: w.URI, MIMEType: w.MIMEType, Meta: w.Meta}
	if w.Text != nil {
		rc.Text = *w.Text
	}
	if w.Blob != nil {
		data, err := base64.StdEncoding.DecodeString(*w.Blob)
		if err != nil {
			return fmt.Errorf("wasmcp: resource contents: invalid base64 blob: %w", err)
		}
		rc.Blob = data
	}
	return nil
}

// Result is a tool result (MCP CallToolResult).
type Result struct {
	// Content is what the model reads.
	Content []Content
	// StructuredContent is the machine-readable result; it must conform
	// to the tool's output schema when it has one. Nil means none.
	StructuredContent any
	// IsError marks a tool execution error the model should see and
	// may correct (not a protocol error).
	IsError bool
	// Meta is the optional _meta object.
	Meta map[string]any
}

// NewResult returns a result with the given content blocks.
func NewResult(content ...Content) *Result { return &Result{Content: content} }

// TextResult returns a result with one text block.
func TextResult(text string) *Result { return NewResult(Text(text)) }

// ErrorResult returns a tool error result (isError true) with one text
// block: a message for the model, saying what went wrong and ideally how
// to fix the call.
func ErrorResult(message string) *Result {
	return &Result{Content: []Content{Text(message)}, IsError: true}
}

// StructuredResult returns a result whose structuredContent is v, with the
// same JSON in a text block for clients that only read content.
func StructuredResult(v any) (*Result, error) {
	b, err := marshal(v)
	if err != nil {
		return nil, fmt.Errorf("wasmcp: structured result: %w", err)
	}
	return &Result{Content: []Content{Text(string(b))}, StructuredContent: json.RawMessage(b)}, nil
}

// MarshalJSON encodes r as a CallToolResult; Content is always an array.
func (r Result) MarshalJSON() ([]byte, error) {
	content := r.Content
	if content == nil {
		content = []Content{}
	}
	return marshal(struct {
		Content           []Content      `json:"content"`
		StructuredContent any            `json:"structuredContent,omitempty"`
		IsError           bool           `json:"isError,omitempty"`
		Meta              map[string]any `json:"_meta,omitempty"`
	}{content, r.StructuredContent, r.IsError, r.Meta})
}

// UnmarshalJSON decodes a CallToolResult (structuredContent is kept as
// json.RawMessage).
func (r *Result) UnmarshalJSON(b []byte) error {
	var w struct {
		Content           []Content       `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
		Meta              map[string]any  `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = Result{Content: w.Content, IsError: w.IsError, Meta: w.Meta}
	if len(w.StructuredContent) > 0 && string(w.StructuredContent) != "null" {
		r.StructuredContent = w.StructuredContent
	}
	return nil
}

// PromptMessage is one message of a prompt (MCP PromptMessage): who says
// it and one content block.
type PromptMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}

// UserMessage returns a prompt message from the user.
func UserMessage(c Content) PromptMessage { return PromptMessage{Role: RoleUser, Content: c} }

// AssistantMessage returns a prompt message from the assistant.
func AssistantMessage(c Content) PromptMessage {
	return PromptMessage{Role: RoleAssistant, Content: c}
}

// PromptResult is the result of a prompt (MCP GetPromptResult): an
// optional description and the messages.
type PromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	Meta        map[string]any  `json:"_meta,omitempty"`
}

// Completion is the answer to a completion request (MCP
// CompleteResult.completion): suggested Values, optionally the Total
// number of matches and whether there are more than sent. At most 100
// values are sent; see [CompleteFrom].
type Completion struct {
	Values  []string `json:"values"`
	Total   int      `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

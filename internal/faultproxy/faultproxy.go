// Package faultproxy is an HTTP reverse proxy for tests that injects the failures object
// stores produce: connections cut in the middle of a response or request body, 503
// SlowDown and other error answers, stalls, and malformed replies of broken servers and
// proxies (a header such as Content-Length left out, an element such as a listing entry's
// LastModified left out). Requests are forwarded with their Host
// header, so signed requests (AWS SigV4) still verify at the server behind.
package faultproxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fault is what a rule does to the requests it matches.
type Fault int

const (
	// Status answers Rule.Status with an S3-style error body carrying Rule.Code, without
	// forwarding the request.
	Status Fault = iota + 1
	// CutResponse forwards the request, sends the response headers and Rule.After bytes of
	// the body, then closes the connection.
	CutResponse
	// CutRequest reads Rule.After bytes of the request body, then closes the connection.
	CutRequest
	// Stall forwards the request, sends the headers and Rule.After bytes of the body (with
	// Rule.After < 0: nothing, not even the headers, and the request is not forwarded),
	// then sends nothing more until the client hangs up (or MaxStall passes).
	Stall
	// StripHeader forwards the request and sends the response without the header
	// Rule.Header; with "Content-Length", the body goes chunked (a HEAD reply: no size at
	// all), as some proxies send it.
	StripHeader
	// StripElement forwards the request and removes every XML element Rule.Element
	// ("<LastModified>...</LastModified>") from the response body, as a broken server or
	// proxy might leave out a field of a listing.
	StripElement
)

// MaxStall bounds a stall, should a client never give up.
const MaxStall = 60 * time.Second

// Rule injects a fault into matching requests.
type Rule struct {
	Name   string                   // for Hits
	Match  func(*http.Request) bool // nil matches every request
	Fault  Fault
	Status int    // for Status
	Code   string // for Status: the S3 error code ("SlowDown", "InternalError")
	After  int64  // bytes passed before a cut or stall
	Times  int    // how many matching requests to hit; 0: all of them
	// Header is the response header StripHeader removes ("Content-Length").
	Header string
	// Element is the XML element StripElement removes ("LastModified", "Size").
	Element string
	// OnHit, when set, runs as the fault fires (e.g. to change the object behind).
	OnHit func()
}

// Proxy is a running fault-injecting proxy.
type Proxy struct {
	URL    string // http://127.0.0.1:PORT
	target *url.URL
	srv    *httptest.Server
	tr     *http.Transport

	mu    sync.Mutex
	rules []*rule
	hits  map[string]int
	total int
}

type rule struct {
	Rule
	used int
}

// New starts a proxy in front of target (e.g. "http://127.0.0.1:7070").
func New(target string) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: u, hits: map[string]int{}, tr: &http.Transport{MaxIdleConnsPerHost: 64}}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = p.srv.URL
	return p, nil
}

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() {
	p.srv.CloseClientConnections()
	p.srv.Close()
	p.tr.CloseIdleConnections()
}

// Add appends a rule; the first rule that matches a request and has hits left applies.
func (p *Proxy) Add(r Rule) {
	p.mu.Lock()
	p.rules = append(p.rules, &rule{Rule: r})
	p.mu.Unlock()
}

// Reset removes the rules and clears the counts.
func (p *Proxy) Reset() {
	p.mu.Lock()
	p.rules, p.hits, p.total = nil, map[string]int{}, 0
	p.mu.Unlock()
}

// Hits returns how many times the rule of that name fired.
func (p *Proxy) Hits(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits[name]
}

// Requests returns how many requests the proxy received.
func (p *Proxy) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total
}

func (p *Proxy) pick(r *http.Request) *rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total++
	for _, ru := range p.rules {
		if (ru.Times == 0 || ru.used < ru.Times) && (ru.Match == nil || ru.Match(r)) {
			ru.used++
			p.hits[ru.Name]++
			return ru
		}
	}
	return nil
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	ru := p.pick(r)
	if ru != nil && ru.OnHit != nil {
		ru.OnHit()
	}
	if ru == nil {
		p.forward(w, r, -1, false)
		return
	}
	switch ru.Fault {
	case Status:
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(ru.Status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected by faultproxy</Message><RequestId>faultproxy</RequestId></Error>`, ru.Code)
	case CutRequest:
		io.CopyN(io.Discard, r.Body, ru.After)
		panic(http.ErrAbortHandler) // the server closes the connection, logging nothing
	case CutResponse:
		p.forward(w, r, ru.After, false)
	case StripHeader, StripElement:
		p.rewrite(w, r, ru.Rule)
	case Stall:
		if ru.After < 0 {
			io.Copy(io.Discard, r.Body)
			stall(r)
			panic(http.ErrAbortHandler)
		}
		p.forward(w, r, ru.After, true)
	default:
		p.forward(w, r, -1, false)
	}
}

func stall(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(MaxStall):
	}
}

// forward passes the request to the target. With limit >= 0 only limit bytes of the
// response body go back, then the connection is cut (or, with hang, held silent first).
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, limit int64, hang bool) {
	resp, err := p.roundTrip(r)
	if err != nil {
		http.Error(w, "faultproxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	copyHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	if limit < 0 {
		io.Copy(w, resp.Body)
		return
	}
	io.CopyN(w, resp.Body, limit)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if hang {
		stall(r)
	}
	panic(http.ErrAbortHandler)
}

// rewrite forwards the request and sends the response without rule's header or element.
func (p *Proxy) rewrite(w http.ResponseWriter, r *http.Request, ru Rule) {
	resp, err := p.roundTrip(r)
	if err != nil {
		http.Error(w, "faultproxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if ru.Fault == StripElement && ru.Element != "" {
		body = stripElement(body, ru.Element)
	}
	copyHeader(w.Header(), resp.Header)
	w.Header().Del("Content-Length") // the body may have changed; StripHeader sends it chunked
	if ru.Fault == StripHeader && !strings.EqualFold(ru.Header, "Content-Length") {
		w.Header().Del(ru.Header)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(resp.StatusCode)
	if f, ok := w.(http.Flusher); ok {
		f.Flush() // the headers go now, without a length: the body follows chunked
	}
	w.Write(body)
}

// stripElement removes every <name>...</name> and <name/> from an XML body.
func stripElement(body []byte, name string) []byte {
	open, closing, empty := []byte("<"+name+">"), []byte("</"+name+">"), []byte("<"+name+"/>")
	body = bytes.ReplaceAll(body, empty, nil)
	var out []byte
	for {
		i := bytes.Index(body, open)
		if i < 0 {
			return append(out, body...)
		}
		j := bytes.Index(body[i:], closing)
		if j < 0 {
			return append(out, body...)
		}
		out = append(out, body[:i]...)
		body = body[i+j+len(closing):]
	}
}

func copyHeader(dst, src http.Header) {
	for k, v := range src {
		if !strings.EqualFold(k, "Connection") {
			dst[k] = v
		}
	}
}

// roundTrip passes the request to the target.
func (p *Proxy) roundTrip(r *http.Request) (*http.Response, error) {
	out := r.Clone(r.Context())
	out.URL.Scheme, out.URL.Host = p.target.Scheme, p.target.Host
	out.Host = r.Host // SigV4 signed the client's Host
	out.RequestURI = ""
	out.Header.Del("Connection")
	if r.ContentLength == 0 {
		out.Body = nil
	}
	return p.tr.RoundTrip(out)
}

// Matchers for S3 requests.

// IsGet matches object reads (GET of a key, not a listing).
func IsGet(r *http.Request) bool {
	return r.Method == http.MethodGet && !isBucketPath(r) && r.URL.Query().Get("uploadId") == ""
}

// IsHead matches HEAD requests.
func IsHead(r *http.Request) bool { return r.Method == http.MethodHead }

// IsList matches bucket listings.
func IsList(r *http.Request) bool { return r.Method == http.MethodGet && isBucketPath(r) }

// IsPut matches whole-object PUTs.
func IsPut(r *http.Request) bool {
	return r.Method == http.MethodPut && r.URL.Query().Get("partNumber") == "" && r.Header.Get("X-Amz-Copy-Source") == ""
}

// IsUploadPart matches UploadPart (not UploadPartCopy).
func IsUploadPart(r *http.Request) bool {
	return r.Method == http.MethodPut && r.URL.Query().Get("partNumber") != "" && r.Header.Get("X-Amz-Copy-Source") == ""
}

// IsCopyPart matches UploadPartCopy.
func IsCopyPart(r *http.Request) bool {
	return r.Method == http.MethodPut && r.URL.Query().Get("partNumber") != "" && r.Header.Get("X-Amz-Copy-Source") != ""
}

// IsComplete matches CompleteMultipartUpload.
func IsComplete(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Query().Get("uploadId") != ""
}

// isBucketPath reports a path-style request for a bucket itself ("/bucket" or "/bucket/").
func isBucketPath(r *http.Request) bool {
	p := strings.Trim(r.URL.Path, "/")
	return p != "" && !strings.Contains(p, "/")
}

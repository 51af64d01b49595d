package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
)

// resultBound bounds the body of every response go-sdk reads through it
// to limit bytes per JSON-RPC message: an application/json body is one
// message, an event stream's events each one (the standing GET stream
// carries many over its life). An error status's body is cut at limit
// (go-sdk reads it for an error it may hold).
type resultBound struct {
	base  http.RoundTripper
	limit int64
	log   *slog.Logger
	// notices gets the notifications of each event stream's events
	// (noticeread.go).
	notices *noticeHook
}

func (b resultBound) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		resp.Body = cutBody{Reader: io.LimitReader(resp.Body, b.limit), Closer: resp.Body}
	case mediaType(resp.Header) == "application/json":
		resp.Body = &jsonBody{src: resp.Body, size: resp.ContentLength, req: r, limit: b.limit}
	case mediaType(resp.Header) == "text/event-stream":
		resp.Body = newMessageReader(resp.Body, b.limit, true, r.Method == http.MethodPost, b.log, b.notices)
	}
	return resp, nil
}

// mediaType is the media type of a Content-Type header, "" when it has
// none or cannot be parsed.
func mediaType(h http.Header) string {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// cutBody reads at most what its Reader lets through, and closes the
// whole body.
type cutBody struct {
	io.Reader
	io.Closer
}

// jsonBody is an application/json answer to one request, read into
// memory up to limit on the first Read (go-sdk reads it whole anyway).
// One of more than limit bytes is read no further: the answer the reader
// gets instead is tooLargeAnswer to the request's id.
type jsonBody struct {
	src   io.ReadCloser
	size  int64 // Content-Length; -1 when unknown
	req   *http.Request
	limit int64
	rest  io.Reader // what Read hands out, once read
}

func (j *jsonBody) Read(p []byte) (int, error) {
	if j.rest == nil {
		rest, err := j.load()
		if err != nil {
			return 0, err
		}
		j.rest = rest
	}
	return j.rest.Read(p)
}

// load reads the body, or makes the answer that replaces it.
func (j *jsonBody) load() (io.Reader, error) {
	if j.size <= j.limit {
		blocks, n, err := readBlocks(io.LimitReader(j.src, j.limit+1))
		if err != nil || n <= j.limit {
			return io.MultiReader(blocks...), err
		}
	}
	_ = j.src.Close() // read no further
	id, err := requestID(j.req)
	if err != nil {
		return nil, fmt.Errorf("an answer of more than %d bytes (max_result_bytes), to a request whose id is unknown: %w", j.limit, err)
	}
	return bytes.NewReader(tooLargeAnswer(id, j.limit)), nil
}

// readBlocks reads r to its end in blocks that grow from 4 KiB to 1 MiB,
// never copied into one: what an answer over the limit held is only what
// was read of it.
func readBlocks(r io.Reader) (blocks []io.Reader, n int64, err error) {
	for size := 4 << 10; ; size = min(2*size, 1<<20) {
		b := make([]byte, size)
		k, err := io.ReadFull(r, b)
		if k > 0 {
			blocks, n = append(blocks, bytes.NewReader(b[:k])), n+int64(k)
		}
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return blocks, n, nil
		case err != nil:
			return blocks, n, err
		}
	}
}

func (j *jsonBody) Close() error { return j.src.Close() }

// requestID is the JSON-RPC id of the request r sent, read again from
// its body (go-sdk sends a body it can give again).
func requestID(r *http.Request) ([]byte, error) {
	if r.GetBody == nil {
		return nil, errors.New("the request's body cannot be read again")
	}
	body, err := r.GetBody()
	if err != nil {
		return nil, fmt.Errorf("read the request again: %w", err)
	}
	defer body.Close()
	var s idScan
	buf := make([]byte, 4096)
	for !s.idDone {
		n, err := body.Read(buf)
		s.feed(buf[:n])
		if err != nil {
			break
		}
	}
	id, ok := s.requestID()
	if !ok {
		return nil, errors.New("the request has no id")
	}
	return id, nil
}

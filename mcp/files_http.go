package mcp

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
)

// The file routes:
//
//	POST /api/files                   multipart upload (API key; sources write); ?interpret=true queues the interpretation
//	POST /api/arkiver/upload          the same, in Arkiver's shape
//	GET  /api/arkiver/files/{fileId}  a file's status (API key; sources read)
//	GET  /files/{id}?u=&exp=&sig=     a file's bytes, by signed URL (no key: the signature is the authority)
//
// Uploads are streamed: the body goes through a multipart reader straight
// into files.Service.Put, which spools it to disk while hashing it, so a
// file of any size is never held in memory. A body whose declared length is
// over the file limit is refused before it is read.

// uploadOverhead is what a multipart body may carry besides the file: the
// part headers and a small metadata part.
const uploadOverhead = 1 << 20

// fileRoutes adds the file routes to mux; nothing without a files service.
func (s *Server) fileRoutes(mux *http.ServeMux, opts HTTPOptions) {
	if s.deps.Files == nil {
		return
	}
	limit := s.deps.Files.MaxFileBytes() + uploadOverhead
	upload := func(arkiver bool) http.Handler {
		return s.authenticate(opts.credentials(), restShape, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.serveUpload(w, r, limit, arkiver)
		}))
	}
	mux.Handle("POST /api/files", upload(false))
	mux.Handle("POST /api/arkiver/upload", upload(true))
	mux.Handle("GET /api/arkiver/files/{fileId}", s.authenticate(opts.credentials(), restShape, http.HandlerFunc(s.serveFileStatus)))
	mux.HandleFunc("GET /files/{id}", s.serveSignedFile)
}

// httpCall is the consent context of a file route's request: like a tool
// call's, audited as one under the route's name.
func (s *Server) httpCall(ctx context.Context, r *http.Request, route string) (*Call, func(code string), *Error) {
	p, ok := ctx.Value(principalKey{}).(consent.Principal)
	if !ok {
		return nil, nil, toError(consent.ErrMissingKey)
	}
	call := &Call{Principal: p, TraceID: newTraceID(), Transport: TransportREST, Tool: &Tool{}}
	if s.deps.Policy != nil {
		d, err := s.deps.Policy.For(ctx, p)
		if err != nil {
			return nil, nil, newError(http.StatusServiceUnavailable, CodeServiceUnavailable, "consent rules are unavailable; retry shortly", nil)
		}
		call.decider = d
	}
	start := time.Now()
	done := func(code string) {
		resp := Response{RequestID: call.TraceID}
		if code != "OK" {
			resp.Err = newError(0, code, "", nil)
		}
		s.audit(ctx, Request{Principal: p, Tool: route, Transport: TransportREST}, call, &resp, time.Since(start))
	}
	return call, done, nil
}

// uploadAnswer is POST /api/files's answer (Arkiver's fields, and store's).
type uploadAnswer struct {
	Success      bool   `json:"success"`
	FileID       string `json:"fileId"`
	FileName     string `json:"fileName"`
	FileSize     int64  `json:"fileSize"`
	MimeType     string `json:"mimeType"`
	UploadedAt   string `json:"uploadedAt"`
	Status       string `json:"status"`
	SourceID     string `json:"source_id,omitempty"`
	ContentHash  string `json:"content_hash,omitempty"`
	Deduplicated *bool  `json:"deduplicated,omitempty"`
	JobID        string `json:"job_id,omitempty"`
}

func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request, limit int64, arkiver bool) {
	route := "POST /api/files"
	if arkiver {
		route = "POST /api/arkiver/upload"
	}
	call, done, e := s.httpCall(r.Context(), r, route)
	if e != nil {
		sendError(w, e, restShape)
		return
	}
	fail := func(e *Error) {
		e.Body.TraceID = call.TraceID
		done(e.Body.Code)
		sendError(w, e, restShape)
	}
	if s.deps.Limiter != nil {
		v, err := s.deps.Limiter.Allow(r.Context(), call.Principal.KeyID, consent.RateClassUpload)
		if err != nil {
			fail(newError(http.StatusServiceUnavailable, CodeServiceUnavailable, "the rate limiter is unavailable; retry shortly", nil))
			return
		}
		setRateHeaders(w.Header(), v)
		if !v.Allowed {
			fail(rateLimited(v))
			return
		}
	}
	if err := call.Require(consent.Write, knowledge.ResourceSources); err != nil {
		fail(toError(err))
		return
	}
	max := s.deps.Files.MaxFileBytes()
	if r.ContentLength > limit {
		fail(newError(http.StatusRequestEntityTooLarge, CodeFileTooLarge, "file exceeds the "+strconv.FormatInt(max, 10)+"-byte limit",
			map[string]any{"file_size_bytes": r.ContentLength, "max_size_bytes": max}))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	mr, err := r.MultipartReader()
	if err != nil {
		fail(newError(http.StatusBadRequest, CodeValidation, "the body must be multipart/form-data with a part named file", map[string]any{"field": "file"}))
		return
	}
	var (
		stored    files.Stored
		found     bool
		interpret = r.URL.Query().Get("interpret") == "true"
	)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fail(uploadReadError(err, max))
			return
		}
		switch part.FormName() {
		case "file":
			if found {
				fail(newError(http.StatusBadRequest, CodeValidation, "one file per upload", map[string]any{"field": "file"}))
				return
			}
			declared, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
			stored, err = s.deps.Files.Put(r.Context(), call.Caller(), part, files.PutRequest{Filename: part.FileName(), MimeType: declared})
			if err != nil {
				if fe := filesError(err); fe != nil {
					fail(fe)
				} else if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
					fail(uploadReadError(err, max))
				} else {
					fail(toError(err))
				}
				return
			}
			found = true
		case "interpret":
			b, _ := io.ReadAll(io.LimitReader(part, 16))
			interpret = strings.TrimSpace(string(b)) == "true"
		default:
			// metadata and anything else: read past it, bounded.
			if _, err := io.Copy(io.Discard, io.LimitReader(part, uploadOverhead)); err != nil {
				fail(uploadReadError(err, max))
				return
			}
		}
	}
	if !found {
		fail(newError(http.StatusBadRequest, CodeValidation, "no part named file", map[string]any{"field": "file"}))
		return
	}
	f := stored.File
	ans := uploadAnswer{Success: true, FileID: f.ID, FileName: f.Filename, FileSize: f.Size, MimeType: f.MimeType,
		UploadedAt: f.CreatedAt.UTC().Format(time.RFC3339), Status: "uploaded"}
	if !arkiver {
		dedup := stored.Deduplicated
		ans.SourceID, ans.ContentHash, ans.Deduplicated = f.ID, f.ContentHash, &dedup
		if interpret && !dedup {
			j, err := s.deps.Files.Enqueue(r.Context(), call.Caller(), queuedBy(call.Principal), f.ID, nil)
			if err != nil {
				fail(toError(err))
				return
			}
			ans.JobID, ans.Status = j.ID, "processing"
		}
	}
	done("OK")
	writeJSON(w, http.StatusOK, ans)
}

// uploadReadError is the answer to a body that could not be read: too
// large (the reader's cap) or broken.
func uploadReadError(err error, max int64) *Error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return newError(http.StatusRequestEntityTooLarge, CodeFileTooLarge, "file exceeds the "+strconv.FormatInt(max, 10)+"-byte limit",
			map[string]any{"max_size_bytes": max})
	}
	return newError(http.StatusBadRequest, CodeValidation, "the multipart body could not be read", map[string]any{"field": "file"})
}

// fileStatus is GET /api/arkiver/files/{fileId}'s file.
type fileStatus struct {
	FileID          string `json:"fileId"`
	FileName        string `json:"fileName"`
	FileSize        int64  `json:"fileSize"`
	MimeType        string `json:"mimeType"`
	UploadedAt      string `json:"uploadedAt"`
	Status          string `json:"status"`
	ProcessingJobID string `json:"processingJobId,omitempty"`
	Error           string `json:"error,omitempty"`
}

func (s *Server) serveFileStatus(w http.ResponseWriter, r *http.Request) {
	call, done, e := s.httpCall(r.Context(), r, "GET /api/arkiver/files")
	if e != nil {
		sendError(w, e, restShape)
		return
	}
	fail := func(e *Error) {
		e.Body.TraceID = call.TraceID
		done(e.Body.Code)
		sendError(w, e, restShape)
	}
	f, err := s.deps.Files.File(r.Context(), call.Caller(), r.PathValue("fileId"))
	if err != nil {
		fail(toError(err))
		return
	}
	st := fileStatus{FileID: f.ID, FileName: f.Filename, FileSize: f.Size, MimeType: f.MimeType,
		UploadedAt: f.CreatedAt.UTC().Format(time.RFC3339), Status: "uploaded"}
	j, ok, err := s.deps.Files.LatestJob(r.Context(), call.Caller(), f.ID)
	if err != nil {
		fail(toError(err))
		return
	}
	if ok {
		st.ProcessingJobID = j.ID
		switch j.Status {
		case files.JobQueued, files.JobRunning:
			st.Status = "processing"
		case files.JobSucceeded:
			st.Status = "processed"
		default:
			st.Status, st.Error = "failed", j.ErrorMessage
			if j.Status == files.JobCancelled {
				st.Error = "cancelled"
			}
		}
	}
	done("OK")
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "file": st})
}

// serveSignedFile answers a signed URL with the file's bytes: 403 for an
// expired, altered or foreign signature, 404 if the file is gone.
func (s *Server) serveSignedFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f, err := s.deps.Files.VerifyURL(r.Context(), id, r.URL.Query())
	if errors.Is(err, files.ErrBadSignature) {
		sendError(w, newError(http.StatusForbidden, CodeForbidden, "the URL is expired or invalid; ask retrieve_file_url for a new one", nil), mcpShape)
		return
	}
	if err != nil {
		if fe := filesError(err); fe != nil {
			sendError(w, fe, mcpShape)
			return
		}
		s.log.Error("signed file", "err", err)
		sendError(w, newError(http.StatusInternalServerError, CodeInternal, "internal error", nil), mcpShape)
		return
	}
	rd, _, err := s.deps.Files.Open(r.Context(), f.UserID, f.ID)
	if err != nil {
		sendError(w, toError(err), mcpShape)
		return
	}
	defer rd.Close()
	h := w.Header()
	h.Set("Content-Type", f.MimeType)
	h.Set("Content-Length", strconv.FormatInt(f.Size, 10))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-store")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Filename}))
	if _, err := io.Copy(w, rd); err != nil {
		s.log.Warn("signed file: send", "file", f.ID, "err", err)
	}
}

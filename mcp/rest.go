package mcp

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cairnkg/cairn/consent"
)

// The REST facade speaks Epitome's shape: GET /mcp/tools lists the tools,
// POST /mcp/call/:toolName runs one with the JSON body as its arguments and
// answers {success: true, result} or {success: false, error}. It goes
// through Handle like every transport, so it has the same authentication
// (done before it, by HTTPHandler), consent, rate limits, budgets and
// audit.

// restSuccess is the REST facade's answer to a successful call.
type restSuccess struct {
	Success bool            `json:"success"`
	Result  json.RawMessage `json:"result"`
}

// restFailure is the REST facade's answer to a failed call.
type restFailure struct {
	Success bool      `json:"success"`
	Error   ErrorBody `json:"error"`
}

// RESTTool is one tool as GET /mcp/tools lists it.
type RESTTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	InputSchema any    `json:"inputSchema"`
}

// restHandler returns the gin engine of the REST facade. It expects the
// principal in the request context (HTTPHandler authenticates first).
func (s *Server) restHandler(maxBytes int64) http.Handler {
	// Release mode keeps gin from printing its route table and debug
	// warnings; Cairn logs through slog.
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.GET("/mcp/tools", func(c *gin.Context) {
		// Listing counts against the key's limit like any request.
		if s.deps.Limiter != nil {
			p, _ := c.Request.Context().Value(principalKey{}).(consent.Principal)
			v, err := s.deps.Limiter.Allow(c.Request.Context(), p.KeyID, consent.RateClassDefault)
			if err != nil {
				s.log.Error("rate limit", "err", err)
				sendError(c.Writer, newError(http.StatusServiceUnavailable, CodeServiceUnavailable, "the rate limiter is unavailable; retry shortly", nil), restShape)
				return
			}
			setRateHeaders(c.Writer.Header(), v)
			if !v.Allowed {
				s.deps.Metrics.RateLimited(string(consent.RateClassDefault))
				sendError(c.Writer, rateLimited(v), restShape)
				return
			}
		}
		tools := make([]RESTTool, len(s.tools))
		for i, t := range s.tools {
			def := t.Def()
			tools[i] = RESTTool{Name: t.Name(), Description: def.Description, InputSchema: def.InputSchema}
		}
		c.JSON(http.StatusOK, gin.H{"tools": tools})
	})
	r.POST("/mcp/call/:toolName", func(c *gin.Context) {
		p, ok := c.Request.Context().Value(principalKey{}).(consent.Principal)
		if !ok {
			sendError(c.Writer, toError(consent.ErrMissingKey), restShape)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxBytes))
		if err != nil {
			sendError(c.Writer, newError(http.StatusRequestEntityTooLarge, CodeRequestTooLarge, "request body is larger than the server accepts",
				map[string]any{"max_bytes": maxBytes}), restShape)
			return
		}
		ctx, span := s.startRequestSpan(c.Request.Context(), "tools/call", TransportREST)
		defer span.End()
		resp := s.Handle(ctx, Request{Principal: p, Tool: c.Param("toolName"), Args: body, Transport: TransportREST})
		setRateHeaders(c.Writer.Header(), resp.Rate)
		if resp.Err != nil {
			sendError(c.Writer, resp.Err, restShape)
			return
		}
		writeJSON(c.Writer, http.StatusOK, restSuccess{Success: true, Result: resp.Output})
	})
	notFound := func(c *gin.Context) {
		sendError(c.Writer, newError(http.StatusNotFound, CodeNotFound, "no such endpoint: use GET /mcp/tools or POST /mcp/call/{tool}", nil), restShape)
	}
	r.NoRoute(notFound)
	r.NoMethod(func(c *gin.Context) {
		sendError(c.Writer, newError(http.StatusMethodNotAllowed, CodeNotFound, "method not allowed: use GET /mcp/tools or POST /mcp/call/{tool}", nil), restShape)
	})
	return r
}

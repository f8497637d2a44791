package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/mcp"
)

// wireConsent gives the MCP layer its consent policy, rate limiter, audit
// log and rule store, all on the control plane, so that every process on
// the same database shares rules, limits and the log.
func (a *app) wireConsent(deps *mcp.Deps, cfg appConfig) {
	a.audit = consent.NewAuditLog(a.control, consent.AuditLogOptions{Logger: a.log})
	deps.Policy = consent.NewPolicy(a.control)
	deps.Limiter = consent.NewLimiter(a.control, consent.LimiterOptions{Limits: cfg.limits, Now: cfg.rateClock})
	deps.Audit = a.audit
	deps.Consent = a.control
}

// closeConsent flushes the audit log.
func (a *app) closeConsent() {
	if a.audit != nil {
		if err := a.audit.Close(); err != nil {
			a.log.Warn("close audit log", "err", err)
		}
	}
}

// limitFlags are the per-key rate limits serve accepts.
type limitFlags struct {
	calls, stores, uploads int
}

func (l *limitFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&l.calls, "rate-limit", consent.DefaultLimits[consent.RateClassDefault], "tool calls a minute per API key (0: unlimited)")
	fs.IntVar(&l.stores, "rate-limit-store", consent.DefaultLimits[consent.RateClassStore], "store calls a minute per API key (0: unlimited)")
	fs.IntVar(&l.uploads, "rate-limit-upload", consent.DefaultLimits[consent.RateClassUpload], "uploads a minute per API key (0: unlimited)")
}

var limitEnv = []envVar{
	{"rate-limit", "CAIRN_RATE_LIMIT"},
	{"rate-limit-store", "CAIRN_RATE_LIMIT_STORE"},
	{"rate-limit-upload", "CAIRN_RATE_LIMIT_UPLOAD"},
}

func (l *limitFlags) limits() (map[consent.RateClass]int, error) {
	if l.calls < 0 || l.stores < 0 || l.uploads < 0 {
		return nil, usageError{"rate limits must be 0 (unlimited) or more"}
	}
	return map[consent.RateClass]int{
		consent.RateClassDefault: l.calls, consent.RateClassStore: l.stores, consent.RateClassUpload: l.uploads,
	}, nil
}

// toolFlags choose the exposed tools.
type toolFlags struct {
	toolsets           string
	allowGlobalSchemas bool
	readOnly           bool
	callTimeout        time.Duration
}

func (t *toolFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.toolsets, "toolsets", "", "comma-separated toolsets to expose, all, or default and others (default: "+toolsetNames(mcp.DefaultToolsets)+
		"; the others: "+toolsetNames(optionalToolsets())+"); fewer tools, a smaller tools/list in the model's context (each one's tools and size: README, Toolsets)")
	fs.BoolVar(&t.readOnly, "read-only", false, "expose only tools that do not write")
	fs.BoolVar(&t.allowGlobalSchemas, "allow-global-schemas", false, "let the owner agent register and change global schemas over MCP (register_schema, update_schema_incremental)")
	fs.DurationVar(&t.callTimeout, "call-timeout", mcp.DefaultCallTimeout, "deadline of one tool call; past it the call is cancelled and answers TIMEOUT")
}

var toolEnv = []envVar{{"toolsets", "CAIRN_TOOLSETS"}, {"read-only", "CAIRN_READ_ONLY"}, {"call-timeout", "CAIRN_CALL_TIMEOUT"},
	{"allow-global-schemas", "CAIRN_ALLOW_GLOBAL_SCHEMAS"}}

func (t *toolFlags) options() (mcp.Options, error) {
	if t.callTimeout < 0 {
		return mcp.Options{}, usageError{fmt.Sprintf("--call-timeout %v is negative; give a positive duration such as 30s", t.callTimeout)}
	}
	o := mcp.Options{ReadOnly: t.readOnly, CallTimeout: t.callTimeout, AllowGlobalSchemas: t.allowGlobalSchemas}
	for _, name := range strings.Split(t.toolsets, ",") {
		if name = strings.TrimSpace(name); name == "all" {
			o.Toolsets = append(o.Toolsets, mcp.AllToolsets...)
		} else if name == "default" { // default,memory_import adds one to the default
			o.Toolsets = append(o.Toolsets, mcp.DefaultToolsets...)
		} else if name != "" {
			o.Toolsets = append(o.Toolsets, mcp.Toolset(name))
		}
	}
	return o, nil
}

func toolsetNames(sets []mcp.Toolset) string {
	names := make([]string, len(sets))
	for i, ts := range sets {
		names[i] = string(ts)
	}
	return strings.Join(names, ", ")
}

// optionalToolsets are the toolsets not exposed by default.
func optionalToolsets() []mcp.Toolset {
	var out []mcp.Toolset
	for _, ts := range mcp.AllToolsets {
		if !slices.Contains(mcp.DefaultToolsets, ts) {
			out = append(out, ts)
		}
	}
	return out
}

// splitList splits a comma-separated flag value.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

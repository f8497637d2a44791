// Package telemetry holds what lets an operator watch a running Cairn:
// Prometheus metrics on a registry the server owns (Metrics), OpenTelemetry
// tracing exported by OTLP when the standard OTEL_* variables ask for it
// (NewTracing), and the decorators that instrument what sits below the MCP
// layer: the embedder, the graph and memory drivers, the database pools.
//
// Labels are bounded by construction: a tool name, an error code, a consent
// action and effect, a rate class, a queue name. No user id, key id, entity
// id, memory text or any other caller-supplied string becomes a label value;
// values a caller could choose (an unknown tool's name, a resource) are
// mapped onto a fixed set first. docs/operations.md lists every series.
package telemetry

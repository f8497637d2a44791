// Package mcp is Cairn's Model Context Protocol surface: the tool
// definitions (typed input and output schemas, annotations, toolsets and
// budgets), the error envelope, the one dispatch path every transport goes
// through (Server.Invoke), and the transports: stdio and Streamable HTTP via
// the official Go SDK.
//
// The SDK's mcp package is imported as mcpsdk to keep the names apart.
// Arguments are validated here, not by the SDK, so that every failure comes
// back as the specification's envelope {error: {code, message, details,
// trace_id}} naming the bad field and the type it should have had.
package mcp

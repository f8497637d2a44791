// Package mcp is Cairn's Model Context Protocol surface: the tool
// definitions (typed input and output schemas, annotations, toolsets,
// budgets and the consent each tool needs), the error envelope, the one
// dispatch path every transport goes through (Server.Handle: rate limit →
// tool → consent → handler with consent-filtered reads → budget → audit),
// and the transports: stdio and Streamable HTTP via the official Go SDK,
// and Epitome's REST facade (GET /mcp/tools, POST /mcp/call/:toolName) on
// gin.
//
// The SDK's mcp package is imported as mcpsdk to keep the names apart.
// Arguments are validated here, not by the SDK, so that every failure comes
// back as the specification's envelope {error: {code, message, details,
// trace_id}} naming the bad field and the type it should have had.
package mcp

// Package interpret reads files into records: entities (as the store
// pipeline takes them, with entity_type and fields) each with the range of
// the file it came from, and the file's text for search.
//
// The interpreters of structured formats (CSV, JSON, iCalendar, vCard,
// e-mail) and the text extractors (plain text, Markdown, PDF, DOCX) need no
// model and are deterministic: the same bytes give the same records. Free
// text becomes one note; with an OpenAI-compatible chat endpoint configured
// (Config.LLM), it is also read by the model, whose every answer is checked
// against the target schemas before anything is kept.
package interpret

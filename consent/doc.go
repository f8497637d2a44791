// Package consent decides who is calling and what they may do: principals
// and API keys, consent rules and their decisions, rate limits and the audit
// log. It holds the rules; the rows live in the control plane (package
// controlplane), reached through the small interfaces declared here.
package consent

// Package govern decides who may use the gateway and how much: managed
// client keys (created, changed and revoked through the admin API, kept in
// the store and read by every replica every few seconds), the admission of
// each request against its key's limits (package quota's counters, in the
// process or in Redis), what a request cost by its model's pricing, and
// the usage ledger, written in batches off the request path.
//
// The server asks three things of it per request: who the key is
// (Managed.Lookup, beside the configuration's own keys), whether the key
// may go on (Governor.Admit, one counter round trip at most), and, when
// the request ends, what it used (Ticket.Settle, which charges the
// counters and records the ledger line).
package govern

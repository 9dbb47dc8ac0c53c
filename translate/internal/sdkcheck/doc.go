// Package sdkcheck has the official SDKs read what Parley emits: request
// bodies through the SDKs' request types, replies, streams and errors
// through the SDKs' own readers and accumulators. Golden tests of every
// dialect and of every pair of dialects share it, so that "the SDK accepts
// it" means the same thing everywhere.
package sdkcheck

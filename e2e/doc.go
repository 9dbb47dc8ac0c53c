// Package e2e holds the end-to-end tests that run Parley as real
// processes: `parley serve` built once, started with a configuration file,
// exercised over HTTP as clients, load balancers and operators would, with
// fake upstreams. A fleet of replicas on one PostgreSQL database, and the
// drain of a process on SIGTERM. It has no code of its own.
package e2e

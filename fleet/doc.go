// Package fleet holds the end-to-end tests of Parley run as a fleet:
// several `parley serve` processes sharing one PostgreSQL database, with
// fake upstreams, exercised over HTTP as clients and a load balancer would.
// It has no code of its own.
package fleet

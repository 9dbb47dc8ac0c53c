//go:build !unix

package dispatch

// alive cannot look at a socket here: an idle connection is taken as
// open, and a request on one the upstream closed fails as it would have.
func (c *upstreamConn) alive() bool { return true }

//go:build !linux

package mesh

import "testing"

// isolate needs Linux network namespaces; elsewhere the multicast tests
// are skipped.
func isolate(t *testing.T) {
	t.Skip("the mesh's multicast tests need Linux network namespaces")
}

//go:build !soak

package hostile

// soakMode: the quick versions of the attacks (`make test`).
const soakMode = false

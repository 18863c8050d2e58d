//go:build soak

package hostile

// soakMode: the long versions of the attacks (make soak builds with -tags
// soak).
const soakMode = true

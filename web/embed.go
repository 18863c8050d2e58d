// Package web holds the web console's built files and exposes them as an
// fs.FS for the management listener. It imports no other package of this
// module.
package web

import (
	"embed"
	"io/fs"
)

//go:embed dist
var files embed.FS

// FS returns the console's files, rooted at the directory holding index.html.
func FS() fs.FS {
	sub, err := fs.Sub(files, "dist")
	if err != nil {
		panic(err) // the embed pattern guarantees dist exists
	}
	return sub
}

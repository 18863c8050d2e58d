// Command mkdeb builds Outpost's Debian packages from packaging/nfpm.yaml
// with nfpm's Go library: one package per ARCH=BINARY argument, written to
// the output directory under Debian's conventional file name
// (outpost_VERSION_ARCH.deb). It is a build tool, not part of the product,
// and lives in its own module so nfpm's dependencies stay out of Outpost's
// go.mod.
//
//	go -C scripts/mkdeb run . -root ../.. -version 0.1.0 -out ../../dist \
//	    amd64=dist/outpost-linux-amd64 arm64=dist/outpost-linux-arm64 armhf=dist/outpost-linux-armv6
//
// Paths in the arguments and in nfpm.yaml are relative to -root. Set
// SOURCE_DATE_EPOCH for reproducible packages (the Makefile uses the commit
// time).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
)

func main() {
	root := flag.String("root", ".", "the repository root (paths are relative to it)")
	version := flag.String("version", "", "package version, e.g. 0.1.0")
	out := flag.String("out", "dist", "output directory, relative to -root")
	config := flag.String("config", "packaging/nfpm.yaml", "nfpm configuration, relative to -root")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: mkdeb [-root DIR] -version V [-out DIR] ARCH=BINARY ...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *version == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := os.Chdir(*root); err != nil {
		fmt.Fprintln(os.Stderr, "mkdeb:", err)
		os.Exit(1)
	}
	for _, arg := range flag.Args() {
		arch, binary, ok := strings.Cut(arg, "=")
		if !ok || arch == "" || binary == "" {
			fmt.Fprintf(os.Stderr, "mkdeb: %q is not ARCH=BINARY\n", arg)
			os.Exit(2)
		}
		path, err := build(*config, *out, arch, binary, *version)
		if err != nil {
			fmt.Fprintf(os.Stderr, "mkdeb: %s: %v\n", arch, err)
			os.Exit(1)
		}
		fmt.Println(path)
	}
}

// build writes one package and returns its path.
func build(config, outDir, arch, binary, version string) (string, error) {
	if st, err := os.Stat(binary); err != nil {
		return "", err
	} else if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a file", binary)
	}
	env := map[string]string{"ARCH": arch, "VERSION": version, "BINARY": binary}
	cfg, err := nfpm.ParseFileWithEnvMapping(config, func(k string) string { return env[k] })
	if err != nil {
		return "", fmt.Errorf("%s: %w", config, err)
	}
	info, err := cfg.Get("deb")
	if err != nil {
		return "", err
	}
	info = nfpm.WithDefaults(info)
	pkg, err := nfpm.Get("deb")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", err
	}
	target := filepath.Join(outDir, pkg.ConventionalFileName(info))
	f, err := os.Create(target)
	if err != nil {
		return "", err
	}
	info.Target = target
	if err := pkg.Package(info, f); err != nil {
		f.Close()
		os.Remove(target)
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(target)
		return "", err
	}
	return target, nil
}

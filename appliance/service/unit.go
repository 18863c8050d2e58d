package service

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strings"
)

// packagedDataDir is the data directory of the shipped unit
// (StateDirectory=outpost): systemd creates it for the service user, and
// ProtectSystem=strict leaves it writable.
const packagedDataDir = "/var/lib/outpost"

// RenderUnit adapts the shipped systemd unit to an installation: its
// ExecStart runs exe with args, and a data directory other than
// /var/lib/outpost is made writable (ReadWritePaths), since the unit's
// ProtectSystem=strict makes the rest of the file system read-only. Every
// other line, the hardening included, is kept as it is.
func RenderUnit(unit []byte, exe string, args []string, dataDir string) ([]byte, error) {
	if !path.IsAbs(exe) {
		return nil, fmt.Errorf("unit: executable %q is not an absolute path", exe)
	}
	if dataDir != "" && !path.IsAbs(dataDir) {
		return nil, fmt.Errorf("unit: data directory %q is not an absolute path", dataDir)
	}
	exec := make([]string, 0, len(args)+1)
	for _, a := range append([]string{exe}, args...) {
		q, err := systemdQuote(a)
		if err != nil {
			return nil, err
		}
		exec = append(exec, q)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(unit))
	found := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "ExecStart="):
			if found {
				return nil, fmt.Errorf("unit: more than one ExecStart line")
			}
			found = true
			out.WriteString("ExecStart=" + strings.Join(exec, " ") + "\n")
		case strings.HasPrefix(line, "StateDirectoryMode=") && dataDir != "" && path.Clean(dataDir) != packagedDataDir:
			out.WriteString(line + "\n")
			q, err := systemdQuote(dataDir)
			if err != nil {
				return nil, err
			}
			out.WriteString("ReadWritePaths=" + q + "\n")
		default:
			out.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("unit: %w", err)
	}
	if !found {
		return nil, fmt.Errorf("unit: no ExecStart line")
	}
	return out.Bytes(), nil
}

// systemdQuote writes one command-line word for a unit file: "%" and "$"
// are doubled (specifier and variable expansion), and a word with spaces,
// quotes or backslashes is double-quoted with C-style escapes
// (systemd.service(5), "Command lines").
func systemdQuote(s string) (string, error) {
	if s == "" {
		return `""`, nil
	}
	if strings.ContainsAny(s, "\x00\n\r") {
		return "", fmt.Errorf("unit: argument %q contains a control character", s)
	}
	s = strings.ReplaceAll(s, "%", "%%")
	s = strings.ReplaceAll(s, "$", "$$")
	if !strings.ContainsAny(s, " \t\"'\\;") {
		return s, nil
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`, nil
}

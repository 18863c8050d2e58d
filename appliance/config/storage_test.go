package config

import (
	"errors"
	"strings"
	"testing"
)

func TestDiskKeys(t *testing.T) {
	c, err := load(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.DiskReserve.Set || c.DiskFloor.Set {
		t.Fatalf("defaults: diskReserve %s diskFloor %s, want auto", c.DiskReserve, c.DiskFloor)
	}
	file := writeFile(t, "diskReserve: 5%\ndiskFloor: 8MiB\n")
	c, err = load(t, []string{"--config", file}, nil)
	if err != nil || c.DiskReserve.Percent != 5 || c.DiskFloor.Bytes != 8<<20 {
		t.Fatalf("file: %+v %+v %v", c.DiskReserve, c.DiskFloor, err)
	}
	c, err = load(t, []string{"--config", file, "--disk-reserve", "1GiB"}, map[string]string{"OUTPOST_DISK_FLOOR": "0"})
	if err != nil || c.DiskReserve.Bytes != 1<<30 || !c.DiskFloor.Set || c.DiskFloor.Bytes != 0 {
		t.Fatalf("flag and env: %+v %+v %v", c.DiskReserve, c.DiskFloor, err)
	}
	cases := []struct {
		name string
		args []string
		env  map[string]string
		file string
		key  string
	}{
		{"reserve not a size", []string{"--disk-reserve", "lots"}, nil, "", "diskReserve"},
		{"reserve negative", nil, map[string]string{"OUTPOST_DISK_RESERVE": "-1MiB"}, "", "diskReserve"},
		{"reserve over half the disk", nil, nil, "diskReserve: 60%\n", "diskReserve"},
		{"floor zero percent", []string{"--disk-floor", "0%"}, nil, "", "diskFloor"},
		{"floor above reserve", []string{"--disk-reserve", "64MiB", "--disk-floor", "128MiB"}, nil, "", "diskFloor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.file != "" {
				args = append([]string{"--config", writeFile(t, tc.file)}, args...)
			}
			c, err := load(t, args, tc.env)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("error %v (config %+v %+v) does not name key %q", err, c.DiskReserve, c.DiskFloor, tc.key)
			}
		})
	}
}

package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxConfigFile bounds the configuration file we are willing to read.
const maxConfigFile = 1 << 20

// Flags is the set of configuration flags registered on one flag.FlagSet.
// Each subcommand registers its own, so every subcommand reads the same
// configuration as `run`.
type Flags struct {
	configFile string
	set        map[string]string // flag name -> raw value, only flags given on the command line
}

// Register adds --config and one flag per flagged key to fs.
func Register(fs *flag.FlagSet) *Flags {
	f := &Flags{set: map[string]string{}}
	fs.StringVar(&f.configFile, "config", "", "YAML configuration file (also OUTPOST_CONFIG)")
	def := Defaults()
	for _, fd := range fields {
		if fd.flag == "" {
			continue
		}
		name := fd.flag
		where := "key " + fd.key + ", env " + fd.env
		if v, note := fd.defaultText(&def); v != "" {
			where += ", default " + v
		} else if note != "" {
			where += ", default: " + note
		}
		fs.Func(name, fd.usage+" ("+where+")", func(v string) error {
			f.set[name] = v
			return nil
		})
	}
	return f
}

// Load builds the configuration: defaults, then the YAML file (from --config
// or OUTPOST_CONFIG), then OUTPOST_* variables, then flags. lookupEnv is
// normally os.LookupEnv. The result is finished (derived values filled) and
// validated.
func (f *Flags) Load(lookupEnv func(string) (string, bool)) (Config, error) {
	c := Defaults()
	path := f.configFile
	if path == "" {
		path, _ = lookupEnv("OUTPOST_CONFIG")
	}
	if path != "" {
		if err := c.LoadFile(path); err != nil {
			return Config{}, err
		}
	}
	if err := c.ApplyEnv(lookupEnv); err != nil {
		return Config{}, err
	}
	for _, fd := range fields {
		if v, ok := f.set[fd.flag]; ok && fd.flag != "" {
			if err := fd.set(&c, v); err != nil {
				return Config{}, fmt.Errorf("flag --%s: %w", fd.flag, err)
			}
		}
	}
	c.Finish()
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// LoadFile applies a YAML file. Unknown keys are errors, so a typo never
// silently leaves a default in place.
func (c *Config) LoadFile(path string) error {
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxConfigFile+1))
	if err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	if len(data) > maxConfigFile {
		return fmt.Errorf("config file %s: larger than %d bytes", path, maxConfigFile)
	}
	if err := c.applyYAML(data); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}

func (c *Config) applyYAML(data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("not valid YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return errors.New("the top level must be a mapping of keys to values")
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		fd, ok := fieldByKey(k.Value)
		if !ok {
			return keyErr(k.Value, fmt.Sprintf("unknown key (line %d)", k.Line))
		}
		switch v.Kind {
		case yaml.ScalarNode:
			if v.Tag == "!!null" {
				continue
			}
			if err := fd.set(c, v.Value); err != nil {
				return err
			}
		case yaml.SequenceNode:
			items := make([]string, 0, len(v.Content))
			for _, it := range v.Content {
				if it.Kind != yaml.ScalarNode {
					return keyErr(fd.key, "list items must be plain values")
				}
				items = append(items, strings.TrimSpace(it.Value))
			}
			if err := fd.setList(c, items); err != nil {
				return err
			}
		default:
			return keyErr(fd.key, fmt.Sprintf("must be a plain value (line %d)", v.Line))
		}
	}
	return nil
}

// ApplyEnv applies every OUTPOST_* variable that is set.
func (c *Config) ApplyEnv(lookupEnv func(string) (string, bool)) error {
	for _, fd := range fields {
		if v, ok := lookupEnv(fd.env); ok {
			if err := fd.set(c, v); err != nil {
				return fmt.Errorf("environment %s: %w", fd.env, err)
			}
		}
	}
	return nil
}

package takproto

// Regenerate takmessage.pb.go after editing takmessage.proto (needs protoc and
// protoc-gen-go v1.36.12 on PATH).
//go:generate protoc --go_out=. --go_opt=paths=source_relative takmessage.proto

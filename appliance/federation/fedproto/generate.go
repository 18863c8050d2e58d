package fedproto

// Regenerate the .pb.go files after editing the .proto files (needs protoc,
// protoc-gen-go v1.36.12 and protoc-gen-go-grpc v1.6.2 on PATH).
//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative binarypayload.proto fig.proto

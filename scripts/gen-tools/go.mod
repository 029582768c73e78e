// The Go plugins of `npm run generate`, pinned here (scripts/gen-tools.sh
// installs them with `go install tool` into .cache/gen/bin).
module github.com/sessiond/sessiond/scripts/gen-tools

go 1.26

tool (
	google.golang.org/grpc/cmd/protoc-gen-go-grpc
	google.golang.org/protobuf/cmd/protoc-gen-go
)

require (
	google.golang.org/grpc/cmd/protoc-gen-go-grpc v1.6.2 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

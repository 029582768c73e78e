module github.com/sessiond/sessiond/clients/go

go 1.19

require (
	go.opentelemetry.io/otel v1.1.0
	google.golang.org/grpc v1.33.3
	google.golang.org/protobuf v1.28.1
)

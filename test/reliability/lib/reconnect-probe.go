// One grpc-go connection calling grpc.health.v1.Health/Check every 100 ms
// (5 s deadline), with a short reconnect backoff (100-500 ms, min connect
// timeout 100 ms). Prints "UP <unix ms>" at the first success after a
// failure and "DOWN <unix ms> <error>" at the first failure after a success,
// for t12-reconnect.ts. Argument: the port.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	_ "github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func main() {
	conn, err := grpc.NewClient("127.0.0.1:"+os.Args[1],
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 500 * time.Millisecond},
			MinConnectTimeout: 100 * time.Millisecond,
		}))
	if err != nil {
		panic(err)
	}
	health := healthpb.NewHealthClient(conn)
	up := 0 // 0 unknown, 1 up, 2 down
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := health.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && up != 1 {
			fmt.Printf("UP %d\n", time.Now().UnixMilli())
			up = 1
		} else if err != nil && up != 2 {
			fmt.Printf("DOWN %d %v\n", time.Now().UnixMilli(), err)
			up = 2
		}
		time.Sleep(100 * time.Millisecond)
	}
}

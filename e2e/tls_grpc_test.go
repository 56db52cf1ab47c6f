package e2e

import (
	"crypto/tls"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/kfa-project/kfa/server"
)

// TestGRPCOverTLS: with --tls-cert/--tls-key the gRPC binding serves
// TLS with the same certificate: a client that trusts the CA calls it, a
// plaintext client is refused, and a renewed pair reaches gRPC as it
// reaches HTTPS.
func TestGRPCOverTLS(t *testing.T) {
	h, ca, dir := startHTTPS(t, []string{"kfa.test", "127.0.0.1"}, func(c *server.Config) {
		withGRPC(c)
		c.TLS.ReloadEvery = 20 * time.Millisecond
	})
	addr := h.srv.GRPCAddr()
	conn := grpcTLSHealthy(t, addr, &tls.Config{RootCAs: ca.Pool})
	alice, _ := h.agent("alice")
	c := a2apb.NewA2AServiceClient(conn)
	actx, acancel := grpcCtx(alice.Token)
	defer acancel()
	asked, err := c.SendMessage(actx, grpcAskReq(t, "tls-grpc-1", "Does gRPC speak TLS too?"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetTask(actx, &a2apb.GetTaskRequest{Id: asked.GetTask().GetId()}); err != nil || got.GetId() != asked.GetTask().GetId() {
		t.Fatalf("GetTask over TLS: %v %v", got, err)
	}

	plain, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	pctx, pcancel := grpcCtx("")
	defer pcancel()
	if _, err := healthpb.NewHealthClient(plain).Check(pctx, &healthpb.HealthCheckRequest{}); err == nil {
		t.Fatal("a plaintext gRPC client was answered by a TLS listener")
	}

	renewed := ca.Issue(t, "kfa.test", "127.0.0.1")
	renewed.Write(t, dir)
	waitServed(t, addr, "127.0.0.1", ca.Pool, renewed.Leaf.SerialNumber, "the renewed pair on the gRPC listener")
}

// grpcTLSHealthy dials addr's gRPC over TLS with c, wants the health
// service to answer SERVING, and returns the connection (closed when the
// test ends).
func grpcTLSHealthy(t *testing.T, addr string, c *tls.Config) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(c)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := grpcCtx("")
	defer cancel()
	if st, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || st.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("gRPC health over TLS at %s: %v %v", addr, st, err)
	}
	return conn
}

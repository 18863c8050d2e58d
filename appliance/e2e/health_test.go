package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"outpost/appliance"
	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/internal/testkit"
)

func TestHealthy(t *testing.T) {
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	if err := appliance.New(cfg, testkit.Discard()).Healthy(context.Background()); err == nil || !strings.Contains(err.Error(), "not started") {
		t.Fatalf("an appliance that was never opened: %v", err)
	}

	app := apptest.Start(t, nil)
	if err := app.Healthy(context.Background()); err != nil {
		t.Fatalf("a running appliance: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := app.Healthy(context.Background()); err == nil || !strings.Contains(err.Error(), "broker is closed") {
		t.Fatalf("a closed appliance: %v", err)
	}
}

"""Operators' instruments: Prometheus metrics, OpenTelemetry traces, structured logs."""

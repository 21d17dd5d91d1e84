"""Turning a model spec into something that encodes: offline model packages, model loading (any backend),
the encode progress shown while it runs, the measured encode rate, and a synthetic encoder for tests."""

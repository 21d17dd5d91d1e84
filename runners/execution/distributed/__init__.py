"""Ray: connecting to a cluster bound to loopback (ray_connect) and encoding a corpus on it straight into the
embedding cache (ray_encode), so the runner then scores from stored vectors."""

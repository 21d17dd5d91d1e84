"""Where results live on disk and how they are read back: mteb's layout plus private-mteb's sidecars, atomic writes,
the fingerprints an identity is made of, which stored runs are current, variants, history and looks."""

"""Vendor telemetry off: nothing private-mteb runs may report usage over the network.

OpenVINO's model converter (`openvino.convert_model`, via `openvino.tools.ovc`) and NNCF send usage events
through the `openvino_telemetry` package unless a consent file in the user's home says no (they call it with
`enable_opt_in_dialog=False`, so the default is "send"). Both fall back to their own no-op stubs when that package
cannot be imported, so it is hidden from the import system before either is imported. The user's consent file
is left alone: this process simply never loads the sender.
"""

from __future__ import annotations

import sys

TELEMETRY_MODULE = "openvino_telemetry"


def block_vendor_telemetry() -> None:
    """Make `import openvino_telemetry` fail in this process (call before importing openvino or nncf)."""
    loaded = sys.modules.get(TELEMETRY_MODULE)
    if loaded is None:
        sys.modules[TELEMETRY_MODULE] = None  # type: ignore[assignment]  # import now raises ImportError
        return
    # someone imported it first: withdraw consent on the class, so an instance made later sends nothing
    telemetry_cls = getattr(loaded, "Telemetry", None)
    if telemetry_cls is not None:
        telemetry_cls.init = lambda self, *a, **k: setattr(self, "consent", False)  # type: ignore[method-assign]
